package base

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/template/buildlog"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// build makes the rootfs for r in a fresh .tmp directory and publishes it as
// l.final. The caller holds the build lock. On any failure, including
// cancellation, the .tmp directory is unmounted and removed.
func build(ctx context.Context, opts Options, r recipe, l layout, lock *os.File) (m *Marker, retErr error) {
	start := time.Now()
	tmp, err := os.MkdirTemp(l.templates, filepath.Base(l.final)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("creating build directory: %w", err)
	}
	defer func() {
		if retErr == nil {
			return
		}
		if err := cachedfs.RemoveTree(tmp); err != nil {
			// The next Ensure retries this under the lock.
			log.G(ctx).Error("cleaning up failed base build", "dir", tmp, "error", err)
		}
	}()
	rootfs := filepath.Join(tmp, "rootfs")
	p := newProgress(opts.Progress)
	p.Printf("building the Debian %s rootfs in %s (usually 2-4 minutes; log %s)", r.Suite, tmp, l.log)
	stop := p.Heartbeat(ctx, opts.heartbeat)
	defer stop()

	if err := bootstrap(ctx, opts, r, l, rootfs, lock, p); err != nil {
		return nil, err
	}
	installed, err := cachedfs.InstalledPackages(rootfs)
	if err != nil {
		return nil, err
	}
	p.Enter(stepConfigure)
	if err := configure(rootfs); err != nil {
		return nil, fmt.Errorf("configuring rootfs: %w", err)
	}
	p.Enter(stepFinish)
	if err := cachedfs.Trim(rootfs); err != nil {
		return nil, fmt.Errorf("trimming rootfs: %w", err)
	}
	m, err = publish(tmp, l, r, opts.Mirror, installed, start)
	if err != nil {
		return nil, err
	}
	stop()
	p.Printf("done: %s, %d packages, %s, in %s", filepath.Join(l.final, "rootfs"),
		len(installed), cachedfs.HumanBytes(m.SizeBytes), time.Since(start).Round(time.Second))
	return m, nil
}

// bootstrap runs debootstrap into rootfs and proves nothing it mounted is
// left on the host. It keeps the downloaded .debs in l.debs for the next
// rebuild, pruned to this build's set so the directory does not grow.
func bootstrap(ctx context.Context, opts Options, r recipe, l layout, rootfs string, lock *os.File, p *buildlog.Progress) (retErr error) {
	if err := os.MkdirAll(l.debs, 0o755); err != nil {
		return fmt.Errorf("creating package cache: %w", err)
	}
	logf, err := os.Create(l.log)
	if err != nil {
		return fmt.Errorf("creating build log: %w", err)
	}
	defer logf.Close()
	p.Enter(stepIndex)
	runErr := runDebootstrap(ctx, debootstrapArgs(opts, r, rootfs, l.debs), lock, logf, p)
	if err := cachedfs.UnmountUnder(rootfs); err != nil {
		return errors.Join(runErr, fmt.Errorf("cleaning up debootstrap mounts: %w", err))
	}
	if runErr != nil {
		// debootstrap's own detailed log (dpkg and maintainer-script
		// output) lives in the tree we are about to delete; keep a copy.
		appendFile(logf, filepath.Join(rootfs, "debootstrap/debootstrap.log"))
		return fmt.Errorf("%w\n(full log: %s)", runErr, l.log)
	}
	return pruneDebCache(l.debs, filepath.Join(rootfs, "var/cache/apt/archives"))
}

// appendFile copies src to the end of w, best effort: it only serves a
// human reading the log of a failed build.
func appendFile(w io.Writer, src string) {
	f, err := os.Open(src)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(w, "\n--- %s ---\n", src)
	io.Copy(w, f)
}

// pruneDebCache removes from cache the .debs this build did not use (older
// versions of the same packages, or packages since dropped from the list).
func pruneDebCache(cache, used string) error {
	entries, err := os.ReadDir(used)
	if err != nil {
		return fmt.Errorf("listing downloaded packages: %w", err)
	}
	keep := make(map[string]bool, len(entries))
	for _, e := range entries {
		keep[e.Name()] = true
	}
	cached, err := os.ReadDir(cache)
	if err != nil {
		return fmt.Errorf("listing package cache: %w", err)
	}
	for _, e := range cached {
		if strings.HasSuffix(e.Name(), ".deb") && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(cache, e.Name())); err != nil {
				return fmt.Errorf("pruning package cache: %w", err)
			}
		}
	}
	return nil
}

// publish measures the tree, writes the marker and renames tmp to l.final.
// The rename is the commit point: a crash before it leaves only a .tmp
// directory, which the next Ensure removes.
func publish(tmp string, l layout, r recipe, mirror string, installed []string, start time.Time) (*Marker, error) {
	size, err := cachedfs.DiskUsage(filepath.Join(tmp, "rootfs"))
	if err != nil {
		return nil, err
	}
	m := &Marker{
		Recipe:        r.hash(),
		Suite:         r.Suite,
		Arch:          r.Arch,
		Mirror:        mirror,
		ConfigVersion: r.ConfigVersion,
		Packages:      r.Packages,
		Installed:     installed,
		SizeBytes:     size,
		BuiltAt:       time.Now().UTC(),
		BuildSeconds:  time.Since(start).Round(time.Millisecond).Seconds(),
	}
	// Flush the tree before the marker says it is complete, so a power
	// cut cannot leave a marked rootfs with empty files.
	syscall.Sync()
	if err := cachedfs.WriteMarker(tmp, m); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, l.final); err != nil {
		return nil, fmt.Errorf("publishing rootfs: %w", err)
	}
	if d, err := os.Open(l.templates); err == nil {
		d.Sync() // make the rename itself durable; best effort
		d.Close()
	}
	return m, nil
}
