// Package base builds warren's "base" template: a Debian rootfs made with
// debootstrap from Debian packages, configured for an agent's sandbox (user
// "user" with passwordless sudo, python3, nodejs, git, curl...), and cached
// on disk so it is built once per recipe.
//
// The cache layout under CacheDir/templates is
//
//	base.lock                 flock held by whoever builds
//	base-debs/                .deb files kept for the next rebuild
//	base-<hash>.log           output of the last build of <hash>
//	base-<hash>.tmp-<rand>/   a build in progress (or an interrupted one)
//	base-<hash>/rootfs        a complete build ...
//	base-<hash>/.complete     ... and its marker (JSON, see Marker)
//
// A build happens entirely inside a .tmp directory that is renamed to
// base-<hash> only once the rootfs and its marker are written, so readers see
// either nothing or a complete tree. Complete builds are never modified.
package base

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
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// Defaults for Options.
const (
	DefaultCacheDir = "/var/cache/warren"
	DefaultMirror   = "http://deb.debian.org/debian"
	DefaultSuite    = "bookworm"
)

// Options says where and how to build. The zero value uses the defaults.
type Options struct {
	// CacheDir holds the templates directory. Default DefaultCacheDir.
	CacheDir string
	// Mirror is the Debian archive debootstrap downloads from; it is also
	// written to the rootfs's sources.list. Default DefaultMirror.
	Mirror string
	// Suite is the Debian release. Default DefaultSuite.
	Suite string
	// Progress receives human-readable progress lines while a build runs,
	// including a periodic line during long steps. Nil discards them.
	Progress io.Writer

	// heartbeat is how often a long step reports that it is alive; tests
	// shorten it.
	heartbeat time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir
	}
	// debootstrap runs from / and needs absolute paths.
	abs, err := filepath.Abs(o.CacheDir)
	if err != nil {
		return o, fmt.Errorf("resolving cache dir: %w", err)
	}
	o.CacheDir = abs
	if o.Mirror == "" {
		o.Mirror = DefaultMirror
	}
	if o.Suite == "" {
		o.Suite = DefaultSuite
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.heartbeat <= 0 {
		o.heartbeat = 15 * time.Second
	}
	return o, nil
}

// layout names the paths of one recipe's cache entry.
type layout struct {
	templates string // CacheDir/templates
	final     string // templates/base-<hash>
	lock      string
	debs      string
	log       string
}

func newLayout(cacheDir, hash string) layout {
	t := filepath.Join(cacheDir, "templates")
	return layout{
		templates: t,
		final:     filepath.Join(t, "base-"+hash),
		lock:      filepath.Join(t, "base.lock"),
		debs:      filepath.Join(t, "base-debs"),
		log:       filepath.Join(t, "base-"+hash+".log"),
	}
}

// Ensure returns the path of the base template's rootfs, building it first
// if the cache has no complete build of the current recipe. It is safe to
// call from several processes at once: one builds while the others wait on a
// file lock and then use its result. Building needs root and debootstrap and
// takes a few minutes; a cache hit takes a few file reads.
func Ensure(ctx context.Context, opts Options) (rootfs string, err error) {
	opts, err = opts.withDefaults()
	if err != nil {
		return "", err
	}
	r := newRecipe(opts.Suite, Packages)
	l := newLayout(opts.CacheDir, r.hash())
	if m, err := readMarker(l.final, r.hash()); err == nil {
		reportCached(opts.Progress, l.final, m)
		return filepath.Join(l.final, "rootfs"), nil
	}
	if err := checkHost(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(l.templates, 0o755); err != nil {
		return "", fmt.Errorf("creating template cache: %w", err)
	}
	lock, err := cachedfs.AcquireLock(ctx, "base", l.lock, opts.Progress)
	if err != nil {
		return "", err
	}
	defer lock.Close()

	// Whoever held the lock before us may have built this very recipe.
	if m, err := readMarker(l.final, r.hash()); err == nil {
		reportCached(opts.Progress, l.final, m)
		return filepath.Join(l.final, "rootfs"), nil
	}
	if err := cachedfs.RemoveLeftovers(l.templates, "base", l.final); err != nil {
		return "", err
	}
	m, err := build(ctx, opts, r, l, lock)
	if err != nil {
		return "", fmt.Errorf("building base template: %w", err)
	}
	log.G(ctx).Info("base template built", "rootfs", filepath.Join(l.final, "rootfs"),
		"size_bytes", m.SizeBytes, "seconds", m.BuildSeconds)
	return filepath.Join(l.final, "rootfs"), nil
}

// Inspect returns the rootfs path and marker of the complete build of the
// current recipe, or an errdefs.ErrNotFound error when there is none yet.
// It never builds.
func Inspect(opts Options) (rootfs string, m *Marker, err error) {
	opts, err = opts.withDefaults()
	if err != nil {
		return "", nil, err
	}
	r := newRecipe(opts.Suite, Packages)
	l := newLayout(opts.CacheDir, r.hash())
	m, err = readMarker(l.final, r.hash())
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, errdefs.New(errdefs.ErrNotFound, "base template not built yet")
	}
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(l.final, "rootfs"), m, nil
}

func reportCached(w io.Writer, dir string, m *Marker) {
	fmt.Fprintf(w, "base: using cached rootfs %s (%s, built %s)\n",
		filepath.Join(dir, "rootfs"), cachedfs.HumanBytes(m.SizeBytes), m.BuiltAt.Format(time.DateOnly))
}

// checkHost fails early, with the fix in the message, when this host cannot
// build.
func checkHost() error {
	if os.Geteuid() != 0 {
		return errdefs.New(errdefs.ErrFailedPrecondition,
			"building the base template needs root (debootstrap creates device nodes and chroots)")
	}
	if _, err := debootstrapPath(); err != nil {
		return err
	}
	if _, err := os.Stat(archiveKeyring); err != nil {
		return errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf(
			"Debian archive keyring %s is missing; install it with `apt-get install debian-archive-keyring`", archiveKeyring))
	}
	return nil
}
