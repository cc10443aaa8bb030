package codeinterp

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/warren-sandbox/warren/internal/template/aptlayer"
	"github.com/warren-sandbox/warren/internal/template/buildlog"
)

// installPackages copies the base rootfs to rootfs and installs r's
// packages with apt (see package aptlayer), the pythran stub first: once
// installed it satisfies python3-pythran, so the resolver never selects
// the real package (see stub.go). It returns the installed package list.
func installPackages(ctx context.Context, baseRootfs, rootfs string, l layout, r recipe, lock *os.File, logw io.Writer, p *buildlog.Progress) ([]string, error) {
	if err := os.MkdirAll(l.debs, 0o755); err != nil {
		return nil, fmt.Errorf("creating apt cache: %w", err)
	}
	if _, err := writeStubDeb(l.debs); err != nil {
		return nil, err
	}
	return aptlayer.Layer{
		BaseRootfs: baseRootfs, Rootfs: rootfs,
		Debs: l.debs, Lists: l.lists, LocalDebs: []string{stubDebName}, Packages: r.Packages,
		Lock: lock, Log: logw, LogPath: l.Log,
		Progress: p, Observe: func(line string) { observe(p, line) },
	}.Install(ctx)
}
