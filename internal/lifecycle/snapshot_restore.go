package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// checkpointForSnapshot moves a live sandbox whose backend checkpoints
// (runsc) to disk with its memory before its snapshot, so the snapshot
// itself only links the image and moves the writable layer, and the
// answer need not wait for the source to be restored. restore reports a
// sandbox that was running and is to be brought back; a paused (frozen)
// one stays paused, now with its memory on disk, as its own checkpoint
// would have left it. A backend that cannot checkpoint (runc) copies its
// writable layer while frozen instead, and nothing happens here.
func (m *Manager) checkpointForSnapshot(ctx context.Context, e *entry) (restore bool, _ error) {
	if !e.backend.Capabilities().Checkpoint {
		return false, nil
	}
	inst, err := e.backend.Inspect(ctx, e.sb.ID)
	if err != nil {
		return false, err
	}
	if inst.State != runtime.StateRunning && inst.State != runtime.StatePaused {
		return false, nil
	}
	stopTimer(&e.ckTimer)
	// Not cancelled with the request: a checkpoint cut half way loses the
	// memory.
	if err := e.backend.Stop(context.WithoutCancel(ctx), e.sb.ID, runtime.StopOptions{Checkpoint: true}); err != nil {
		return false, err
	}
	crashpoint.Hit("snapshot.checkpointed")
	return inst.State == runtime.StateRunning, nil
}

// restoreLater restores the source of a snapshot (restoreSource) in the
// manager's background and then lets e.mu go, which the caller holds and
// hands over: requests for the sandbox wait until it is running again.
// Once the manager is shut down it restores before it returns.
func (m *Manager) restoreLater(ctx context.Context, e *entry) {
	ctx = context.WithoutCancel(ctx)
	if !m.bg.enter() {
		defer e.mu.Unlock()
		m.restoreSource(ctx, e)
		return
	}
	go func() {
		defer m.bg.wg.Done()
		defer e.mu.Unlock()
		m.restoreSource(ctx, e)
	}()
}

// restoreSource brings a snapshot's source back from the memory image the
// snapshot's checkpoint left, and drops the snapshotting intent. Until
// then the record says running with that intent, which a restart after a
// crash settles by restoring it (Reconcile). A failed restore leaves the
// sandbox paused with its image, so the next resume tries again (or, with
// the image gone, fails clearly); it is logged, never lost silently. The
// caller holds e.mu.
func (m *Manager) restoreSource(ctx context.Context, e *entry) {
	ctx = context.WithoutCancel(ctx)
	crashpoint.Hit("snapshot.restore")
	start := time.Now()
	inst, err := e.backend.Start(ctx, e.sb.ID, runtime.StartOptions{})
	if err != nil {
		log.G(ctx).Error("restoring a sandbox after its snapshot failed; it is paused, a resume tries again", "sandbox", e.sb.ID, "err", fmt.Errorf("restoring sandbox: %w", err))
		m.strandedBySnapshot(ctx, e)
		return
	}
	crashpoint.Hit("snapshot.restored")
	m.dropIntent(ctx, e)
	m.watchInit(ctx, e, inst.Pid)
	log.G(ctx).Debug("sandbox restored after its snapshot", "sandbox", e.sb.ID, "took", time.Since(start))
}
