package lifecycle

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Reconcile runs once at startup, before anything else touches sandboxes.
// The backends first settle what a crash left half done; then every stored
// sandbox is settled by what it was doing (its intent) and what its
// backend holds: re-adopted in the state it really is in, or destroyed
// and forgotten. Instances the store does not know are destroyed, so a
// restart neither loses sandboxes nor leaks them. Only this node's records
// are read (Options.NodeName): in a cluster another node's sandboxes are
// absent from this host's backends, and reaping them would kill them.
func (m *Manager) Reconcile(ctx context.Context) error {
	for _, b := range m.opts.Backends {
		if err := b.Recover(ctx); err != nil {
			return fmt.Errorf("recovering %s sandboxes: %w", b.Name(), err)
		}
	}
	records, err := m.opts.Store.ListSandboxesOnNode(ctx, m.opts.NodeName)
	if err != nil {
		return fmt.Errorf("listing stored sandboxes: %w", err)
	}
	instances := make(map[string]*runtime.Instance)
	owner := make(map[string]runtime.Backend)
	for _, b := range m.opts.Backends {
		list, err := b.List(ctx)
		if err != nil {
			return fmt.Errorf("listing %s sandboxes: %w", b.Name(), err)
		}
		for _, inst := range list {
			instances[inst.ID] = inst
			owner[inst.ID] = b
		}
	}
	adopted := 0
	for _, sb := range records {
		inst := instances[sb.ID]
		delete(instances, sb.ID)
		ok, err := m.reconcileOne(ctx, sb, inst, owner[sb.ID])
		if err != nil {
			return err
		}
		if ok {
			adopted++
		}
	}
	for id := range instances {
		log.G(ctx).Warn("destroying sandbox unknown to the store", "sandbox", id)
		m.destroy(ctx, owner[id], id)
	}
	if adopted > 0 {
		log.G(ctx).Info("re-adopted sandboxes", "count", adopted)
	}
	// Snapshot dirs of a fork or snapshot that crashed half-way.
	if m.snaps != nil {
		m.snaps.Collect(ctx)
	}
	return nil
}

// reconcileOne settles one stored sandbox and reports whether it was
// re-adopted (false: destroyed and forgotten).
func (m *Manager) reconcileOne(ctx context.Context, sb *store.Sandbox, inst *runtime.Instance, b runtime.Backend) (bool, error) {
	ctx = log.With(ctx, "sandbox", sb.ID)
	want := settledState(sb, inst)
	if want == "" && inst == nil && m.parker != nil && m.parker.ParkedHere(sb) {
		// Its parked state is whole: the heartbeat's sweep rebuilds it
		// (handed here, or this node's own data lost).
		log.G(ctx).Info("paused sandbox without an instance here; it is taken over from its parked state")
		return false, nil
	}
	if want == "" {
		log.G(ctx).Warn("forgetting a sandbox that died while warren was down or was being killed", "intent", sb.Intent)
		if inst != nil {
			m.destroy(ctx, b, sb.ID)
		}
		if err := m.opts.Store.DeleteSandbox(ctx, sb.ID); err != nil && !errdefs.IsNotFound(err) {
			return false, fmt.Errorf("forgetting dead sandbox: %w", err)
		}
		reason := sandbox.KillDied
		if sb.Intent == store.IntentKilling {
			reason = sandbox.KillInterrupted
		}
		m.emit(ctx, sb, execution{}, store.EventKilled, map[string]any{"reason": reason})
		return false, nil
	}
	before := *sb
	e := &entry{sb: sb, ip: inst.IP, backend: b, conns: newConnSet()}
	if !e.ip.IsValid() {
		e.ip, _ = netip.ParseAddr(sb.IP)
	}
	inst = m.settle(ctx, e, inst, want)
	if sb.State == store.SandboxPaused && sb.PausedAt.IsZero() {
		sb.PausedAt = time.Now().UTC()
	} else if sb.State == store.SandboxRunning {
		sb.PausedAt = time.Time{}
	}
	sb.Intent = ""
	if sb.State != before.State || before.Intent != "" || !sb.PausedAt.Equal(before.PausedAt) {
		log.G(ctx).Warn("sandbox settled after a restart", "was", before.State, "intent", before.Intent, "now", sb.State)
		if err := m.opts.Store.UpdateSandbox(ctx, sb); err != nil {
			return false, fmt.Errorf("recording settled sandbox: %w", err)
		}
	}
	m.adopt(ctx, e, inst)
	return true, nil
}

// settledState is the state a stored sandbox is reconciled to, from its
// intent and its instance's state; "" means destroy and forget it.
//   - killing: the kill is finished, whatever is left.
//   - snapshotting: the sandbox goes back to the state it had (a runc
//     copy froze it; a runsc snapshot leaves a running one stopped with
//     its memory image until it is restored: it is restored now).
//   - pausing a paused sandbox (its background checkpoint): paused.
//   - pausing, resuming, or none: the state the instance is in, a
//     stopped one counting as paused; only a sandbox that was running with
//     nothing under way and is found stopped has died and is forgotten.
//
// A stopped sandbox with an intent is never forgotten: its disk, and its
// memory image when the checkpoint completed, wait for a resume.
func settledState(sb *store.Sandbox, inst *runtime.Instance) string {
	if inst == nil || sb.Intent == store.IntentKilling {
		return ""
	}
	switch inst.State {
	case runtime.StateRunning:
		// A paused sandbox that was being snapshotted or checkpointed:
		// runsc thaws one to checkpoint it.
		if (sb.Intent == store.IntentSnapshotting || sb.Intent == store.IntentPausing) && sb.State == store.SandboxPaused {
			return store.SandboxPaused
		}
		return store.SandboxRunning
	case runtime.StatePaused:
		if sb.Intent == store.IntentSnapshotting && sb.State == store.SandboxRunning {
			return store.SandboxRunning
		}
		return store.SandboxPaused
	default:
		if sb.Intent == store.IntentSnapshotting && sb.State == store.SandboxRunning && inst.Checkpointed {
			return store.SandboxRunning
		}
		if sb.Intent != "" || sb.State == store.SandboxPaused {
			return store.SandboxPaused
		}
		return ""
	}
}

// settle brings e's instance to state want, sets e.sb.State to what it
// then really is, and returns the instance as it now is. A sandbox found
// running after a resume gets envd initialised again: the crash may have
// come before its cold-booted envd learnt its token and environment.
func (m *Manager) settle(ctx context.Context, e *entry, inst *runtime.Instance, want string) *runtime.Instance {
	id := e.sb.ID
	var err error
	switch {
	case want == store.SandboxRunning && inst.State == runtime.StatePaused:
		err = e.backend.Resume(ctx, id)
	case want == store.SandboxPaused && inst.State == runtime.StateRunning:
		err = e.backend.Pause(ctx, id)
	case want == store.SandboxRunning && inst.State == runtime.StateStopped:
		// A snapshot's source, checkpointed and not yet restored; should
		// the restore fail it stays paused with its image.
		_, err = e.backend.Start(ctx, id, runtime.StartOptions{})
	case want == store.SandboxRunning && e.sb.Intent == store.IntentResuming:
		if err = m.bootedAgain(ctx, e); err != nil {
			log.G(ctx).Warn("envd of a sandbox resumed before the crash does not answer; stopping it", "err", err)
			err = e.backend.Stop(ctx, id, runtime.StopOptions{})
		}
	}
	if err != nil {
		log.G(ctx).Warn("settling sandbox after a restart", "want", want, "err", err)
	}
	if now, ierr := e.backend.Inspect(ctx, id); ierr == nil {
		inst = now
	}
	e.sb.State = store.SandboxPaused
	if inst.State == runtime.StateRunning {
		e.sb.State = store.SandboxRunning
	}
	return inst
}

func (m *Manager) adopt(ctx context.Context, e *entry, inst *runtime.Instance) {
	// The run before the restart is not known: a new one starts here.
	e.exec = newExecution("")
	e.running.Store(e.sb.State == store.SandboxRunning)
	m.mu.Lock()
	m.live[e.sb.ID] = e
	m.mu.Unlock()
	e.mu.Lock()
	m.armTimer(e) // an end already passed fires at once and expires it
	if !e.killed {
		m.watchInit(ctx, e, inst.Pid)
	}
	if inst.State == runtime.StatePaused && e.backend.Capabilities().Checkpoint {
		m.armCheckpoint(e)
	}
	e.mu.Unlock()
}

func (m *Manager) destroy(ctx context.Context, b runtime.Backend, id string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := b.Destroy(ctx, id); err != nil {
		log.G(ctx).Error("destroying sandbox", "sandbox", id, "err", err)
	}
}
