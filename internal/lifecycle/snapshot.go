package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Snapshot saves a sandbox's state (disk, and memory where its backend can
// checkpoint) as a snapshot new sandboxes can start from. The sandbox keeps
// running (or stays paused); open connections to it are cut, as by a pause.
func (m *Manager) Snapshot(ctx context.Context, id, name string) (*store.Snapshot, error) {
	if name != "" {
		if err := checkSnapshotName(name); err != nil {
			return nil, err
		}
	}
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return nil, err
	}
	// Until the store lists it, the new directory is unknown to the
	// collector, which would remove it (and the checkpoint the sandbox is
	// about to be restored from): hold the collector off until then.
	m.snapMu.RLock()
	defer m.snapMu.RUnlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	snap, err := m.snapshotLocked(ctx, e)
	if err != nil {
		return nil, err
	}
	if name != "" {
		snap.Names = []string{name}
	}
	if err := m.opts.Store.CreateSnapshot(ctx, snap); err != nil {
		m.collectLater()
		return nil, fmt.Errorf("recording snapshot: %w", err)
	}
	m.emit(ctx, e.sb, e.exec, store.EventSnapshotted, map[string]any{"snapshot_id": snap.ID, "snapshot_names": snap.Names})
	log.G(ctx).Info("snapshot created", "sandbox", id, "snapshot", snap.ID, "memory", snap.Memory, "name", name)
	return snap, nil
}

// snapshotLocked takes the snapshot into a new directory; the caller
// holds snapMu for reading and e.mu, and records the snapshot (or makes
// sandboxes stand on it) before it lets snapMu go, or lets the collector
// remove it.
func (m *Manager) snapshotLocked(ctx context.Context, e *entry) (*store.Snapshot, error) {
	if m.opts.SnapshotDir == "" {
		return nil, errdefs.New(errdefs.ErrNotImplemented, "this server keeps no snapshots (no snapshot directory)")
	}
	if err := os.MkdirAll(m.opts.SnapshotDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating snapshot directory: %w", err)
	}
	if err := m.setIntent(ctx, e, store.IntentSnapshotting); err != nil {
		return nil, err
	}
	crashpoint.Hit("snapshot.intent")
	e.cutForCheckpoint(ctx)
	start := time.Now()
	sid := "snap" + newID()[:16]
	rs, err := e.backend.Snapshot(ctx, e.sb.ID, filepath.Join(m.opts.SnapshotDir, sid))
	if err != nil {
		m.strandedBySnapshot(ctx, e)
		return nil, fmt.Errorf("snapshotting sandbox: %w", err)
	}
	m.dropIntent(ctx, e)
	crashpoint.Hit("snapshot.taken")
	size, _ := dirSize(rs.Dir)
	log.G(ctx).Debug("snapshot taken", "sandbox", e.sb.ID, "took", time.Since(start), "bytes", size)
	return &store.Snapshot{
		ID:         sid,
		SandboxID:  e.sb.ID,
		TemplateID: e.sb.TemplateID,
		Backend:    e.sb.Backend,
		Dir:        rs.Dir,
		Layers:     rs.Layers,
		Memory:     rs.Memory,
		Hostname:   hostname(e.sb.ID),
		EnvVars:    copyMap(e.sb.EnvVars),
		CPUCount:   e.sb.CPUCount,
		MemoryMB:   e.sb.MemoryMB,
		DiskMB:     e.sb.DiskMB,
		SizeBytes:  size,
		CreatedAt:  time.Now().UTC(),
		TeamID:     store.TeamOf(e.sb.TeamID),
	}, nil
}

// strandedBySnapshot records as paused a sandbox that a failed snapshot
// left stopped (its processes checkpointed, or gone): its disk, and its
// memory image when there is one, wait for a resume, where a sandbox still
// recorded as running would be taken for dead and removed by a restart.
func (m *Manager) strandedBySnapshot(ctx context.Context, e *entry) {
	ctx = context.WithoutCancel(ctx)
	inst, err := e.backend.Inspect(ctx, e.sb.ID)
	if err != nil || inst.State != runtime.StateStopped || e.sb.State == store.SandboxPaused {
		m.dropIntent(ctx, e)
		return
	}
	e.sb.State, e.sb.Intent, e.sb.PausedAt = store.SandboxPaused, "", time.Now().UTC()
	e.running.Store(false)
	if e.timer != nil {
		e.timer.Stop()
	}
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		log.G(ctx).Error("recording a sandbox its failed snapshot left stopped", "sandbox", e.sb.ID, "err", err)
	}
	log.G(ctx).Warn("a failed snapshot left the sandbox stopped; it is paused now", "sandbox", e.sb.ID, "memory", inst.Checkpointed)
}

// checkSnapshotName accepts what the SDKs' name filter uses: letters,
// digits, '-', '_', '.', and one optional ':tag' and 'team/' prefix.
func checkSnapshotName(name string) error {
	ok := len(name) <= 128
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("-_.:/", r):
		default:
			ok = false
		}
	}
	if !ok || name == "" {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("invalid snapshot name %q: use up to 128 letters, digits, '-', '_', '.', ':' and '/'", name))
	}
	return nil
}

// ListSnapshots returns the snapshots, newest first, optionally only those
// of one sandbox or matching one name or id.
func (m *Manager) ListSnapshots(ctx context.Context, sandboxID, name string) ([]*store.Snapshot, error) {
	all, err := m.opts.Store.ListSnapshots(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	return sandbox.FilterSnapshots(all, sandboxID, name), nil
}

// DeleteSnapshot forgets a snapshot and frees what no sandbox uses of it:
// its memory image at once, its disk layer once no sandbox stands on it.
func (m *Manager) DeleteSnapshot(ctx context.Context, idOrName string) error {
	snap, err := m.opts.Store.GetSnapshot(ctx, idOrName)
	if err != nil {
		return err
	}
	m.snapMu.Lock()
	defer m.snapMu.Unlock()
	if err := m.opts.Store.DeleteSnapshot(ctx, snap.ID); err != nil {
		return err
	}
	m.collectLocked(ctx)
	return nil
}

// hasSnapshotDirs reports whether any snapshot directory exists.
func (m *Manager) hasSnapshotDirs() bool {
	if m.opts.SnapshotDir == "" {
		return false
	}
	entries, err := os.ReadDir(m.opts.SnapshotDir)
	return err == nil && len(entries) > 0
}

// collectLater removes unused snapshot directories in the background.
func (m *Manager) collectLater() {
	m.goBackground(func(ctx context.Context) {
		m.snapMu.Lock()
		defer m.snapMu.Unlock()
		m.collectLocked(ctx)
	})
}

// collectLocked removes what is left of snapshots the store no longer
// has: the memory image always, the directory when no sandbox's disk
// stacks on its layer and no remaining snapshot's does. Callers hold
// snapMu, which creates from a snapshot hold too, so a layer is never
// removed under a sandbox being created on it.
func (m *Manager) collectLocked(ctx context.Context) {
	if m.opts.SnapshotDir == "" {
		return
	}
	entries, err := os.ReadDir(m.opts.SnapshotDir)
	if err != nil {
		return
	}
	snaps, err := m.opts.Store.ListSnapshots(ctx)
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
	for _, b := range m.opts.Backends {
		list, err := b.List(ctx)
		if err != nil {
			log.G(ctx).Warn("snapshot collector: listing sandboxes", "backend", b.Name(), "err", err)
			return // unsure what is used: keep everything
		}
		for _, inst := range list {
			for _, l := range inst.Layers {
				used[l] = true
			}
		}
	}
	for _, de := range entries {
		dir := filepath.Join(m.opts.SnapshotDir, de.Name())
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

// dirSize sums the allocated size of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
