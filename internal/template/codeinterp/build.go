package codeinterp

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// build makes the rootfs for r in s and publishes it as l.Final. The
// caller holds the build lock and removes s.Dir if this fails.
func build(ctx context.Context, opts Options, r recipe, l layout, baseRootfs string, s cachedfs.Staging) (*Marker, error) {
	start := time.Now()
	tmp, rootfs, lock, logf := s.Dir, s.Rootfs(), s.Lock, s.Log
	p := newProgress(opts.Progress)
	p.Printf("building %s in %s (usually 2-4 minutes; log %s)", TemplateID, tmp, l.Log)
	stop := p.Heartbeat(ctx, opts.Heartbeat)
	defer stop()

	installed, err := installPackages(ctx, baseRootfs, rootfs, l, r, lock, logf, p)
	if err != nil {
		return nil, err
	}
	p.Enter(stepDeno)
	deno, denoErr := installDeno(ctx, r.Deno, l.npm, rootfs)
	if denoErr != nil {
		// The Python template is still useful: publish it without the
		// JavaScript kernels, and say so loudly.
		fmt.Fprintf(logf, "\nDeno not installed: %v\n", denoErr)
		p.Printf("WARNING: Deno not installed, so no javascript/typescript kernels: %v", denoErr)
		log.G(ctx).Warn("deno not installed", "error", denoErr)
	}
	p.Enter(stepConfigure)
	if err := writeConfig(rootfs, denoErr == nil); err != nil {
		return nil, fmt.Errorf("configuring rootfs: %w", err)
	}
	if err := compileJava(ctx, rootfs, lock, logf); err != nil {
		return nil, fmt.Errorf("compiling the Java kernel: %w", err)
	}
	if err := cachedfs.UnmountUnder(rootfs); err != nil {
		return nil, fmt.Errorf("cleaning up javac mounts: %w", err)
	}
	p.Enter(stepFinish)
	if err := cachedfs.Trim(rootfs); err != nil {
		return nil, fmt.Errorf("trimming rootfs: %w", err)
	}
	m := &Marker{Deno: deno, Installed: installed}
	if denoErr != nil {
		m.DenoError = denoErr.Error()
	}
	if err := publish(tmp, l, r, m, start); err != nil {
		return nil, err
	}
	stop()
	p.Printf("done: %s, %s, kernels %v, in %s", l.Rootfs(),
		cachedfs.HumanBytes(m.SizeBytes), m.Kernels, time.Since(start).Round(time.Second))
	return m, nil
}

// publish completes m, writes it and renames tmp to l.Final, the commit
// point of a build.
func publish(tmp string, l layout, r recipe, m *Marker, start time.Time) error {
	size, err := cachedfs.DiskUsage(filepath.Join(tmp, "rootfs"))
	if err != nil {
		return err
	}
	for lang := range Kernels(m.DenoError == "") {
		m.Kernels = append(m.Kernels, lang)
	}
	slices.Sort(m.Kernels)
	m.Recipe, m.BaseRecipe, m.ConfigVersion, m.Packages = r.hash(), r.BaseRecipe, r.ConfigVersion, r.Packages
	m.SizeBytes = size
	m.BuiltAt = time.Now().UTC()
	m.BuildSeconds = time.Since(start).Round(time.Millisecond).Seconds()
	return cachedfs.Publish(tmp, l.Final, m)
}
