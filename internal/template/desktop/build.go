package desktop

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/template/aptlayer"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// The steps of a build after aptlayer's copy and apt steps.
const (
	stepConfigure = aptlayer.NextStep + iota
	stepFinish
)

var stepNames = map[int]string{
	stepConfigure: "writing the XFCE and noVNC configuration",
	stepFinish:    "trimming, measuring and saving",
}

// build makes the rootfs for r in s and publishes it as l.Final. The
// caller holds the build lock and removes s.Dir if this fails.
func build(ctx context.Context, opts Options, r recipe, l layout, baseRootfs string, s cachedfs.Staging) (*Marker, error) {
	start := time.Now()
	p := aptlayer.NewProgress(opts.Progress, prefix, stepNames)
	p.Printf("building %s in %s (usually 4-8 minutes, about 210 MiB to download; log %s)", TemplateID, s.Dir, l.Log)
	stop := p.Heartbeat(ctx, opts.Heartbeat)
	defer stop()

	installed, err := aptlayer.Layer{
		BaseRootfs: baseRootfs, Rootfs: s.Rootfs(),
		Debs: l.debs, Lists: l.lists, Packages: r.Packages,
		Lock: s.Lock, Log: s.Log, LogPath: l.Log, Progress: p,
	}.Install(ctx)
	if err != nil {
		return nil, err
	}
	p.Enter(stepConfigure)
	if err := writeConfig(s.Rootfs(), configFiles); err != nil {
		return nil, fmt.Errorf("configuring rootfs: %w", err)
	}
	p.Enter(stepFinish)
	if err := cachedfs.Trim(s.Rootfs()); err != nil {
		return nil, fmt.Errorf("trimming rootfs: %w", err)
	}
	size, err := cachedfs.DiskUsage(s.Rootfs())
	if err != nil {
		return nil, err
	}
	m := &Marker{
		Recipe: r.hash(), BaseRecipe: r.BaseRecipe, ConfigVersion: r.ConfigVersion,
		Packages: r.Packages, Installed: installed, SizeBytes: size, BuiltAt: time.Now().UTC(),
		BuildSeconds: time.Since(start).Round(time.Millisecond).Seconds(),
	}
	if err := cachedfs.Publish(s.Dir, l.Final, m); err != nil {
		return nil, err
	}
	stop()
	p.Printf("done: %s, %s, %d packages, in %s", l.Rootfs(), cachedfs.HumanBytes(size), len(installed),
		time.Since(start).Round(time.Second))
	return m, nil
}
