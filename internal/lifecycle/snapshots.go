package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// SnapshotKeeper is the room that makes snapshots and forks and collects
// the snapshot directories nothing uses (internal/snapshot). The manager
// holds its collector off while it stands a sandbox on a snapshot
// directory, and asks it to collect what an ended sandbox may have freed.
type SnapshotKeeper interface {
	// Hold keeps the collector off until the returned func is called.
	Hold() func()
	// CollectLater collects unused snapshot directories in the background.
	CollectLater()
	// Collect collects them now (at a start: what a crash left).
	Collect(ctx context.Context)
}

// SetSnapshots registers the snapshot room; before Reconcile.
func (m *Manager) SetSnapshots(k SnapshotKeeper) { m.snaps = k }

// holdSnapshots keeps the collector off until the returned func is called.
func (m *Manager) holdSnapshots() func() {
	if m.snaps == nil {
		return func() {}
	}
	return m.snaps.Hold()
}

// collectLater asks the snapshot room to collect unused directories.
func (m *Manager) collectLater() {
	if m.snaps != nil {
		m.snaps.CollectLater()
	}
}

// Checkpoint saves sandbox id's state (disk, and memory where its
// backend can checkpoint) into the new directory dir, under the
// snapshotting intent: the sandbox keeps running (or stays paused), its
// open connections cut as by a pause. It returns the snapshot and a copy
// of the sandbox's record. record, when set, lists the snapshot while the
// sandbox is still held, and the sandbox's snapshotted event follows.
// The caller holds the collector off (SnapshotKeeper.Hold) and, for a
// sandbox handed here parked, has taken it over first (Get): ErrNotFound
// when the manager does not hold id.
func (m *Manager) Checkpoint(ctx context.Context, id, dir string, record func(*store.Snapshot) error) (*store.Snapshot, *store.Sandbox, error) {
	e, err := m.get(id)
	if err != nil {
		return nil, nil, err
	}
	e.mu.Lock()
	unlock := e.mu.Unlock
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	if e.killed {
		return nil, nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
	}
	src := copySandbox(e.sb)
	snap, restore, err := m.snapshotLocked(ctx, e, dir)
	if err != nil {
		return nil, nil, err
	}
	if restore {
		// The snapshot is whole: the answer need not wait for the source's
		// restore, which keeps e.mu (handed over, never let go between)
		// until it is back, so the source's traffic waits for it.
		unlock = nil
		defer m.restoreLater(ctx, e)
	}
	if record != nil {
		if err := record(snap); err != nil {
			return nil, nil, err
		}
		m.emit(ctx, e.sb, e.exec, store.EventSnapshotted, map[string]any{"snapshot_id": snap.ID, "snapshot_names": snap.Names})
	}
	return snap, src, nil
}

// CreateFrom starts a sandbox from snap, a snapshot of a sandbox made
// from tpl; the caller holds the collector off.
func (m *Manager) CreateFrom(ctx context.Context, req sandbox.CreateRequest, tpl *store.Template, snap *store.Snapshot) (*store.Sandbox, error) {
	return m.create(ctx, req, tpl, snap)
}

// StandingLayers lists the layers this node's sandboxes stand on, as
// their backends report them.
func (m *Manager) StandingLayers(ctx context.Context) ([]string, error) {
	var out []string
	for _, b := range m.opts.Backends {
		list, err := b.List(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing %s sandboxes: %w", b.Name(), err)
		}
		for _, inst := range list {
			out = append(out, inst.Layers...)
		}
	}
	return out, nil
}

// snapshotLocked takes the snapshot into the new directory dir; the
// caller holds the collector off and e.mu, and records the snapshot (or
// makes sandboxes stand on it) before it lets the collector go, or the
// collector removes it. A running sandbox whose backend checkpoints is
// left stopped with its memory image, still under the snapshotting
// intent: restore reports that the caller must bring it back
// (restoreSource).
func (m *Manager) snapshotLocked(ctx context.Context, e *entry, dir string) (_ *store.Snapshot, restore bool, _ error) {
	if err := m.setIntent(ctx, e, store.IntentSnapshotting); err != nil {
		return nil, false, err
	}
	crashpoint.Hit("snapshot.intent")
	e.cutForCheckpoint(ctx)
	start := time.Now()
	restore, err := m.checkpointForSnapshot(ctx, e)
	if err != nil {
		m.strandedBySnapshot(ctx, e)
		return nil, false, fmt.Errorf("snapshotting sandbox: %w", err)
	}
	rs, err := e.backend.Snapshot(ctx, e.sb.ID, dir)
	if err != nil {
		if restore {
			m.restoreSource(ctx, e)
		} else {
			m.strandedBySnapshot(ctx, e)
		}
		return nil, false, fmt.Errorf("snapshotting sandbox: %w", err)
	}
	if !restore {
		m.dropIntent(ctx, e)
	}
	crashpoint.Hit("snapshot.taken")
	size, _ := dirSize(rs.Dir)
	log.G(ctx).Debug("snapshot taken", "sandbox", e.sb.ID, "took", time.Since(start), "bytes", size)
	return &store.Snapshot{
		ID:         filepath.Base(dir),
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
		// Mounts, not data: the volumes' files are never in the snapshot.
		VolumeMounts: slices.Clone(e.sb.VolumeMounts),
	}, restore, nil
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
