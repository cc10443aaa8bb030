package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/warren-sandbox/warren/internal/log"
)

// CollectLater removes unused snapshot directories in the background: a
// sandbox that ended may have stood on a deleted snapshot's layer, a
// fork's unlisted snapshot is done with once its forks are up.
func (r *Room) CollectLater() {
	if !r.hasDirs() {
		return
	}
	r.m.Go(r.Collect)
}

// Collect removes unused snapshot directories now: at a start, what a
// fork or snapshot that crashed half-way left.
func (r *Room) Collect(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.collectLocked(ctx)
}

// hasDirs reports whether any snapshot directory exists.
func (r *Room) hasDirs() bool {
	if r.opts.Dir == "" {
		return false
	}
	entries, err := os.ReadDir(r.opts.Dir)
	return err == nil && len(entries) > 0
}

// collectLocked removes what is left of snapshots the store no longer
// has: the memory image always, the directory when no sandbox's disk
// stacks on its layer and no remaining snapshot's does. Callers hold mu,
// which creates from a snapshot hold too (Hold), so a layer is never
// removed under a sandbox being created on it.
func (r *Room) collectLocked(ctx context.Context) {
	if r.opts.Dir == "" {
		return
	}
	entries, err := os.ReadDir(r.opts.Dir)
	if err != nil || len(entries) == 0 {
		return
	}
	snaps, err := r.opts.Store.ListSnapshots(ctx)
	if err != nil {
		log.G(ctx).Warn("snapshot collector: listing snapshots", "err", err)
		return
	}
	used := map[string]bool{}
	known := map[string]bool{}
	for _, s := range snaps {
		known[s.Dir] = true
		for _, l := range s.Layers {
			used[l] = true
		}
	}
	standing, err := r.m.StandingLayers(ctx)
	if err != nil {
		log.G(ctx).Warn("snapshot collector: listing sandboxes", "err", err)
		return // unsure what is used: keep everything
	}
	for _, l := range standing {
		used[l] = true
	}
	for _, de := range entries {
		dir := filepath.Join(r.opts.Dir, de.Name())
		if known[dir] {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, "memory"))
		if !usesDir(used, dir) {
			if err := os.RemoveAll(dir); err != nil {
				log.G(ctx).Warn("snapshot collector: removing", "dir", dir, "err", err)
			}
		}
	}
}

func usesDir(used map[string]bool, dir string) bool {
	for l := range used {
		if l == dir || strings.HasPrefix(l, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
