// Package codeinterp builds warren's "code-interpreter-v1" template: the
// base template (see package base) plus Debian's scientific Python stack
// with ipykernel, the Deno binary for JavaScript and TypeScript kernels, a
// kernels file for the interpreter server and IPython formatters that turn
// DataFrames and matplotlib figures into E2B's `data` and `chart` results.
//
// It starts from a copy of the complete base rootfs and installs the extra
// packages with apt-get in a chroot, rather than running debootstrap again
// with a longer list: apt resolves virtual packages and alternatives that
// debootstrap's resolver does not (python3-matplotlib depends on the
// virtual python3-numpy-abi9, for one), the user, sudo, profile and trimming
// set-up comes from base untouched, and only the extra packages are
// downloaded.
//
// The cache layout under CacheDir/templates mirrors base's:
//
//	code-interpreter.lock              flock held by whoever builds
//	code-interpreter-debs/             apt's .deb cache, kept for rebuilds
//	code-interpreter-lists/            apt's package lists, kept for rebuilds
//	code-interpreter-npm/              the verified Deno npm tarball
//	code-interpreter-<hash>.log        output of the last build of <hash>
//	code-interpreter-<hash>.tmp-<rand>/ a build in progress
//	code-interpreter-<hash>/rootfs     a complete build and its marker
//
// As with base, a build is renamed into place only once complete, and a
// complete build is never modified.
package codeinterp

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

// TemplateID is the name SDKs ask for.
const TemplateID = "code-interpreter-v1"

// prefix names this template's entries in the cache.
const prefix = "code-interpreter"

// Options says where and how to build. The zero value uses base's defaults.
type Options = aptlayer.Options

// layout names one recipe's cache entry and the template's own caches.
type layout struct {
	cachedfs.Entry
	debs, lists, npm string
}

func newLayout(cacheDir, hash string) layout {
	e := cachedfs.NewEntry(cacheDir, prefix, hash)
	return layout{
		Entry: e,
		debs:  filepath.Join(e.Templates, prefix+"-debs"),
		lists: filepath.Join(e.Templates, prefix+"-lists"),
		npm:   filepath.Join(e.Templates, prefix+"-npm"),
	}
}

// Ensure returns the path of the code-interpreter template's rootfs,
// building the base template and then this one if the cache has no
// complete build of the current recipe. Concurrent callers, in this or
// other processes, wait for one build. A build needs root, debootstrap (for
// base), unshare, chroot and network access to the Debian mirror and the
// npm registry; a cache hit takes a few file reads.
//
// When Deno cannot be fetched the template is still built and published,
// without the javascript and typescript kernels; the marker's DenoError
// says why, and removing the cache entry makes the next Ensure retry.
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
	_, bm, err := base.Inspect(opts.Base())
	if err != nil {
		return "", fmt.Errorf("reading base template marker: %w", err)
	}
	r, err := newRecipe(bm.Recipe, Packages)
	if err != nil {
		return "", err
	}
	l := newLayout(opts.CacheDir, r.hash())
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
		log.G(ctx).Info("code interpreter template built", "rootfs", rootfs,
			"size_bytes", m.SizeBytes, "seconds", m.BuildSeconds, "deno", m.Deno)
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
	_, bm, err := base.Inspect(opts.Base())
	if err != nil {
		return "", nil, err
	}
	r, err := newRecipe(bm.Recipe, Packages)
	if err != nil {
		return "", nil, err
	}
	l := newLayout(opts.CacheDir, r.hash())
	m, err = readMarker(l.Final, r.hash())
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, errdefs.New(errdefs.ErrNotFound, TemplateID+" template not built yet")
	}
	if err != nil {
		return "", nil, err
	}
	return l.Rootfs(), m, nil
}

func reportCached(w io.Writer, dir string, m *Marker) {
	deno := "with Deno " + m.Deno
	if m.Deno == "" {
		deno = "WITHOUT Deno (" + m.DenoError + "); remove the directory to retry"
	}
	fmt.Fprintf(w, "%s: using cached rootfs %s (%s, %s, built %s)\n", prefix,
		filepath.Join(dir, "rootfs"), cachedfs.HumanBytes(m.SizeBytes), deno, m.BuiltAt.Format(time.DateOnly))
}
