// Package desktop builds warren's "desktop" template, the one the
// @e2b/desktop SDK creates by default: the base template (see package base)
// plus an X server (Xvfb), XFCE (session, window manager, desktop, panel),
// the tools the SDK drives it with (xdotool, scrot, xrandr, xdg-open,
// gtk-launch), x11vnc and noVNC for its stream, and Firefox ESR, a terminal
// and an editor to drive. Nothing is started: the SDK starts Xvfb at the
// size it asks for, then XFCE, then the stream.
//
// The template is an apt layer on a copy of the base rootfs (see package
// aptlayer), cached like code-interpreter-v1 under CacheDir/templates:
//
//	desktop.lock              flock held by whoever builds
//	desktop-debs/             apt's .deb cache, kept for rebuilds
//	desktop-lists/            apt's package lists, kept for rebuilds
//	desktop-<hash>.log        output of the last build of <hash>
//	desktop-<hash>.tmp-<rand>/ a build in progress
//	desktop-<hash>/rootfs     a complete build and its marker
package desktop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/template/aptlayer"
	"github.com/warren-sandbox/warren/internal/template/base"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// TemplateID is the name the SDK asks for.
const TemplateID = "desktop"

// prefix names this template's entries in the cache.
const prefix = "desktop"

// Options says where and how to build. The zero value uses base's defaults.
type Options = aptlayer.Options

// layout names one recipe's cache entry and the template's apt caches.
type layout struct {
	cachedfs.Entry
	debs, lists string
}

func newLayout(cacheDir, hash string) layout {
	e := cachedfs.NewEntry(cacheDir, prefix, hash)
	return layout{
		Entry: e,
		debs:  filepath.Join(e.Templates, prefix+"-debs"),
		lists: filepath.Join(e.Templates, prefix+"-lists"),
	}
}

// Ensure returns the path of the desktop template's rootfs, building the
// base template and then this one if the cache has no complete build of the
// current recipe. Concurrent callers, in this or other processes, wait for
// one build. A build needs root, debootstrap (for base), unshare, chroot
// and network access to the Debian mirror; a cache hit takes a few file
// reads.
func Ensure(ctx context.Context, opts Options) (rootfs string, err error) {
	opts, err = opts.WithDefaults()
	if err != nil {
		return "", err
	}
	// base.Ensure is a cache hit after the first time; its recipe hash is
	// part of ours, so a new base rebuilds this template too.
	baseRootfs, err := base.Ensure(ctx, opts.Base())
	if err != nil {
		return "", fmt.Errorf("ensuring base template: %w", err)
	}
	r, l, err := current(opts)
	if err != nil {
		return "", err
	}
	hit := func() bool {
		m, err := readMarker(l.Final, r.hash())
		if err == nil {
			reportCached(opts.Progress, l.Final, m)
		}
		return err == nil
	}
	if hit() {
		return l.Rootfs(), nil
	}
	if err := aptlayer.CheckHost(TemplateID); err != nil {
		return "", err
	}
	var m *Marker
	rootfs, err = l.Build(ctx, opts.Progress, hit, func(s cachedfs.Staging) error {
		var buildErr error
		m, buildErr = build(ctx, opts, r, l, baseRootfs, s)
		return buildErr
	})
	if err != nil {
		return "", fmt.Errorf("building %s template: %w", TemplateID, err)
	}
	if m != nil {
		log.G(ctx).Info("desktop template built", "rootfs", rootfs,
			"size_bytes", m.SizeBytes, "seconds", m.BuildSeconds)
	}
	return rootfs, nil
}

// Inspect returns the rootfs path and marker of the complete build of the
// current recipe, or an errdefs.ErrNotFound error when there is none (which
// includes "the base template is not built yet"). It never builds.
func Inspect(opts Options) (rootfs string, m *Marker, err error) {
	opts, err = opts.WithDefaults()
	if err != nil {
		return "", nil, err
	}
	r, l, err := current(opts)
	if err != nil {
		return "", nil, err
	}
	m, err = readMarker(l.Final, r.hash())
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, errdefs.New(errdefs.ErrNotFound, TemplateID+" template not built yet")
	}
	if err != nil {
		return "", nil, err
	}
	return l.Rootfs(), m, nil
}

// current is the recipe on top of the built base template, and its cache
// entry.
func current(opts Options) (recipe, layout, error) {
	_, bm, err := base.Inspect(opts.Base())
	if err != nil {
		return recipe{}, layout{}, fmt.Errorf("reading base template marker: %w", err)
	}
	r, err := newRecipe(bm.Recipe, Packages, configFiles)
	if err != nil {
		return recipe{}, layout{}, err
	}
	return r, newLayout(opts.CacheDir, r.hash()), nil
}

func reportCached(w io.Writer, dir string, m *Marker) {
	fmt.Fprintf(w, "%s: using cached rootfs %s (%s, built %s)\n", prefix,
		filepath.Join(dir, "rootfs"), cachedfs.HumanBytes(m.SizeBytes), m.BuiltAt.Format(time.DateOnly))
}
