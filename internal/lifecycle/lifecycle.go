package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Kill destroys the sandbox and frees everything it held. Open proxied
// connections are cut, so streams in flight end with an aborted response.
func (m *Manager) Kill(ctx context.Context, id string) error {
	return m.kill(ctx, id, sandbox.KillRequested)
}

// kill is Kill for reason (Kill*).
func (m *Manager) kill(ctx context.Context, id, reason string) error {
	e, err := m.get(id)
	if errdefs.IsNotFound(err) && m.parker != nil {
		// Handed here parked and not taken over: no need to rebuild it
		// (and a parked state that cannot be rebuilt can still go).
		if done, kerr := m.parker.KillHanded(ctx, id, reason); done || kerr != nil {
			return kerr
		}
		e, err = m.get(id) // taken over meanwhile, or not handed here
	}
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return m.killLocked(ctx, e, reason)
}

// killLocked kills e for reason (Kill*), which its killed event records.
func (m *Manager) killLocked(ctx context.Context, e *entry, reason string) (retErr error) {
	if e.killed {
		return errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", e.sb.ID))
	}
	defer func(start time.Time) { m.observe(sandbox.OpKill, e.sb.Backend, start, retErr) }(time.Now())
	e.killed = true
	if e.timer != nil {
		e.timer.Stop()
	}
	stopTimer(&e.ckTimer)
	ctx = context.WithoutCancel(ctx)
	// Before it leaves live: a logs request finds one or the other.
	m.ending(ctx, e)
	notOurs := m.markKilling(ctx, e)
	m.mu.Lock()
	delete(m.live, e.sb.ID)
	m.mu.Unlock()
	e.conns.closeAll()
	crashpoint.Hit("kill.intent")
	if err := e.backend.Destroy(ctx, e.sb.ID); err != nil {
		log.G(ctx).Error("destroying sandbox", "sandbox", e.sb.ID, "err", err)
	}
	crashpoint.Hit("kill.destroyed")
	if notOurs {
		log.G(ctx).Warn("destroyed this node's copy of a sandbox the cluster no longer has here", "sandbox", e.sb.ID)
		m.collectLater()
		return nil
	}
	err := m.opts.Store.DeleteSandbox(ctx, e.sb.ID)
	if errors.Is(err, errdefs.ErrUnavailable) {
		// Destroyed all the same: the kill is done, its record goes later.
		m.forgetLater(ctx, e.sb.ID, func() {
			m.unparked(e.sb.ID)
			m.emitKilled(ctx, e, reason)
		})
		return nil
	}
	if err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("forgetting sandbox: %w", err)
	}
	m.unparked(e.sb.ID)
	m.emitKilled(ctx, e, reason)
	log.G(ctx).Info("sandbox killed", "sandbox", e.sb.ID)
	m.collectLater() // it may have stood on a deleted snapshot's layer
	return nil
}

// markKilling records the kill's intent, and the sandbox as no longer
// parked, while it is still live: until then a request for it finds the
// entry, and from then on none takes it over from its parked state. It
// reports whether the record is not this node's any more. Should the
// write fail otherwise, the kill goes on: a crash before the record is
// deleted leaves a sandbox without processes, which a restart forgets.
func (m *Manager) markKilling(ctx context.Context, e *entry) (notOurs bool) {
	e.sb.Parked = false
	err := m.setIntent(ctx, e, store.IntentKilling)
	if err == nil {
		return false
	}
	log.G(ctx).Warn("killing sandbox", "sandbox", e.sb.ID, "err", err)
	// On a node, a record not found is gone (the API reaped it) or on
	// another node (handed over while this one was taken for dead):
	// either way its record, parked state and events are not this
	// node's to touch.
	return m.opts.NodeName != "" && errdefs.IsNotFound(err)
}

// SetTimeout makes the sandbox end `d` from now, shortening or lengthening;
// a paused sandbox will have `d` left when resumed.
func (m *Manager) SetTimeout(ctx context.Context, id string, d time.Duration) error {
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sb.EndAt = lifeBase(e.sb, time.Now().UTC()).Add(d)
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		return fmt.Errorf("saving timeout: %w", err)
	}
	m.armTimer(e)
	m.emitTimeout(ctx, e)
	return nil
}

// Refresh extends the sandbox's life to at least `d` from now (paused: to
// at least `d` left when resumed).
func (m *Manager) Refresh(ctx context.Context, id string, d time.Duration) error {
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return m.extendLocked(ctx, e, d)
}

func (m *Manager) extendLocked(ctx context.Context, e *entry, d time.Duration) error {
	if end := lifeBase(e.sb, time.Now().UTC()).Add(d); end.After(e.sb.EndAt) {
		e.sb.EndAt = end
		if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
			return fmt.Errorf("saving timeout: %w", err)
		}
		m.armTimer(e)
		m.emitTimeout(ctx, e)
	}
	return nil
}

// armTimer (re)schedules the sandbox's end. Callers hold e.mu.
func (m *Manager) armTimer(e *entry) {
	if e.timer != nil {
		e.timer.Stop()
	}
	if e.sb.State == store.SandboxPaused {
		return // a paused sandbox waits for connect or kill
	}
	id := e.sb.ID
	e.timer = m.afterFunc(time.Until(e.sb.EndAt), func(ctx context.Context) { m.expire(ctx, id) })
}

// expire ends a sandbox whose timeout passed: pause it when asked at create,
// otherwise kill it.
func (m *Manager) expire(ctx context.Context, id string) {
	e, err := m.get(id)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.killed || time.Now().Before(e.sb.EndAt) {
		return // re-armed meanwhile
	}
	if e.sb.AutoPause {
		if err := m.pauseLocked(ctx, e, !e.sb.AutoPauseNoMemory); err == nil {
			return
		}
	}
	if err := m.killLocked(ctx, e, sandbox.KillTimeout); err != nil {
		log.G(ctx).Error("expiring sandbox", "sandbox", id, "err", err)
	}
}

// Connect returns a running sandbox, extending its life to at least timeout
// from now, or resumes a paused one for resumeLifetime. resumed reports the
// latter. timeout may be NoTimeout. With
// memory false a paused sandbox boots afresh from its disk instead of
// continuing its processes.
func (m *Manager) Connect(ctx context.Context, id string, timeout time.Duration, memory bool) (sb *store.Sandbox, resumed bool, err error) {
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return nil, false, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sb.State == store.SandboxPaused {
		if err := m.resumeLocked(ctx, e, timeout, memory); err != nil {
			return nil, false, err
		}
		return copySandbox(e.sb), true, nil
	}
	if timeout == sandbox.NoTimeout {
		timeout = sandbox.DefaultTimeout
	}
	if err := m.extendLocked(ctx, e, timeout); err != nil {
		return nil, false, err
	}
	return copySandbox(e.sb), false, nil
}

// Pause stops a running sandbox. With keepMemory its processes are kept:
// checkpointed to disk where the backend can (runsc: no memory is held
// while paused), frozen in memory otherwise (runc). Without, they end and
// a resume boots from the disk. ErrConflict if it is already paused.
func (m *Manager) Pause(ctx context.Context, id string, keepMemory bool) error {
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return m.pauseLocked(ctx, e, keepMemory)
}

func (m *Manager) pauseLocked(ctx context.Context, e *entry, keepMemory bool) (retErr error) {
	if e.sb.State == store.SandboxPaused {
		return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("sandbox %q is already paused", e.sb.ID))
	}
	defer func(start time.Time) { m.observe(sandbox.OpPause, e.sb.Backend, start, retErr) }(time.Now())
	if err := m.setIntent(ctx, e, store.IntentPausing); err != nil {
		return err
	}
	crashpoint.Hit("pause.intent")
	e.cutForCheckpoint(ctx)
	start := time.Now()
	var err error
	checkpoint := e.backend.Capabilities().Checkpoint
	switch {
	case !keepMemory:
		err = e.backend.Stop(ctx, e.sb.ID, runtime.StopOptions{})
	default:
		// Frozen first, answered then: a checkpoint (at once with
		// CheckpointAfter 0) follows in the background, holding e.mu,
		// so a resume or kill that comes meanwhile waits for it.
		err = e.backend.Pause(ctx, e.sb.ID)
		if err == nil && checkpoint {
			m.armCheckpoint(e)
		}
	}
	if err != nil {
		m.dropIntent(ctx, e)
		return fmt.Errorf("pausing sandbox: %w", err)
	}
	crashpoint.Hit("pause.acted")
	e.sb.State, e.sb.Intent = store.SandboxPaused, ""
	e.sb.PausedAt = time.Now().UTC()
	e.running.Store(false)
	if e.timer != nil {
		e.timer.Stop()
	}
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		return fmt.Errorf("saving pause: %w", err)
	}
	m.emit(ctx, e.sb, e.exec, store.EventPaused, map[string]any{"execution": executionData(e)})
	log.G(ctx).Info("sandbox paused", "sandbox", e.sb.ID, "memory", keepMemory, "took", time.Since(start))
	m.paused(e)
	return nil
}

// resumeLocked brings a paused sandbox back as it was paused: thawed,
// restored from its checkpoint, or (without memory, or asked for a cold
// boot) booted from its disk with envd initialised again. It then lives
// resumeLifetime(timeout).
func (m *Manager) resumeLocked(ctx context.Context, e *entry, timeout time.Duration, memory bool) (retErr error) {
	start := time.Now()
	defer func() { m.observe(sandbox.OpResume, e.sb.Backend, start, retErr) }()
	if !e.running.Load() {
		release, err := m.admit(ctx, e.sb.TeamID, e.sb.CPUCount, e.sb.MemoryMB)
		if err != nil {
			return err
		}
		defer release()
		done, err := m.startTurn(ctx, sandbox.OpResume, e.sb.TeamID, e.sb.MemoryMB, 0)
		if err != nil {
			return err
		}
		defer done()
	}
	stopTimer(&e.ckTimer)
	inst, err := e.backend.Inspect(ctx, e.sb.ID)
	if err != nil {
		return fmt.Errorf("resuming sandbox: %w", err)
	}
	// The new end goes with the intent: a sandbox found running after a
	// crash lives as long as this resume asked. So does the end of its
	// parked copy, which a running sandbox leaves behind at once. The
	// pause time moves with it, so one found still paused keeps that
	// lifetime for its next resume.
	prevEnd, prevPaused, parked := e.sb.EndAt, e.sb.PausedAt, e.sb.Parked
	now := time.Now().UTC()
	e.sb.EndAt, e.sb.PausedAt, e.sb.Parked = now.Add(resumeLifetime(e.sb, timeout)), now, false
	if err := m.setIntent(ctx, e, store.IntentResuming); err != nil {
		e.sb.EndAt, e.sb.PausedAt, e.sb.Parked = prevEnd, prevPaused, parked
		return err
	}
	crashpoint.Hit("resume.intent")
	if err := m.resumeBackend(ctx, e, inst, memory); err != nil {
		e.sb.EndAt, e.sb.PausedAt, e.sb.Parked = prevEnd, prevPaused, parked
		m.dropIntent(ctx, e)
		return err
	}
	if parked {
		m.unparked(e.sb.ID)
	}
	e.sb.State, e.sb.Intent = store.SandboxRunning, ""
	e.sb.PausedAt = time.Time{}
	e.running.Store(true)
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		return fmt.Errorf("saving resume: %w", err)
	}
	m.armTimer(e)
	m.emitResumed(ctx, e)
	log.G(ctx).Info("sandbox resumed", "sandbox", e.sb.ID, "memory", memory, "took", time.Since(start))
	return nil
}

// resumeBackend thaws, restores or boots the paused sandbox e and, when it
// booted afresh, initialises envd again; init is watched from then on.
func (m *Manager) resumeBackend(ctx context.Context, e *entry, inst *runtime.Instance, memory bool) error {
	var err error
	booted := false
	var started *runtime.Instance
	var mounts []runtime.Mount
	if inst.State != runtime.StatePaused || !memory {
		// A start mounts the volumes afresh, from where they are now.
		if mounts, err = m.hostMounts(ctx, e.sb.VolumeMounts); err != nil {
			return fmt.Errorf("resuming sandbox: %w", err)
		}
	}
	switch {
	case inst.State == runtime.StatePaused && memory:
		err = e.backend.Resume(ctx, e.sb.ID)
	case inst.State == runtime.StatePaused: // frozen, but a cold boot was asked for
		if err = e.backend.Stop(ctx, e.sb.ID, runtime.StopOptions{}); err == nil {
			started, err = e.backend.Start(ctx, e.sb.ID, runtime.StartOptions{ColdBoot: true, Mounts: mounts})
			booted = true
		}
	default:
		booted = !memory || !inst.Checkpointed
		started, err = e.backend.Start(ctx, e.sb.ID, runtime.StartOptions{ColdBoot: !memory, Mounts: mounts})
	}
	if err != nil {
		return fmt.Errorf("resuming sandbox: %w", err)
	}
	crashpoint.Hit("resume.started")
	if booted {
		if err := m.bootedAgain(ctx, e); err != nil {
			// Stopped again, as a pause without memory leaves it, so the
			// sandbox is what it was before the request (an envd that does
			// not answer is a 503, which promises a retry is safe).
			if serr := e.backend.Stop(context.WithoutCancel(ctx), e.sb.ID, runtime.StopOptions{}); serr != nil {
				log.G(ctx).Error("stopping a sandbox whose resume failed", "sandbox", e.sb.ID, "err", serr)
			}
			return err
		}
	}
	if started != nil {
		m.watchInit(ctx, e, started.Pid)
	} else {
		m.watchInit(ctx, e, inst.Pid) // thawed: the same init, watched unless it exited meanwhile
	}
	return nil
}

// armCheckpoint schedules the checkpoint of a frozen paused sandbox.
// Callers hold e.mu.
func (m *Manager) armCheckpoint(e *entry) {
	stopTimer(&e.ckTimer)
	id := e.sb.ID
	e.ckTimer = m.afterFunc(m.opts.CheckpointAfter, func(ctx context.Context) { m.checkpointPaused(ctx, id) })
}

// checkpointPaused moves a sandbox that is still paused (frozen) to disk.
// On failure it stays frozen, which a resume handles as well. The intent
// (pausing, on a sandbox recorded paused) tells a restart after a crash
// in the middle that the sandbox is paused whatever the runtime shows:
// runsc thaws it to checkpoint it. The checkpoint is not cancelled by a
// shutdown: a runsc checkpoint cut half way would lose the memory.
func (m *Manager) checkpointPaused(ctx context.Context, id string) {
	e, err := m.get(id)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.killed || e.sb.State != store.SandboxPaused {
		return
	}
	inst, err := e.backend.Inspect(ctx, id)
	if err != nil || inst.State != runtime.StatePaused {
		return
	}
	if err := m.setIntent(ctx, e, store.IntentPausing); err != nil {
		log.G(ctx).Warn("checkpointing paused sandbox; it stays frozen in memory", "sandbox", id, "err", err)
		return
	}
	crashpoint.Hit("pause.checkpoint")
	start := time.Now()
	err = e.backend.Stop(context.WithoutCancel(ctx), id, runtime.StopOptions{Checkpoint: true})
	if err == nil {
		crashpoint.Hit("pause.checkpointed")
	}
	m.dropIntent(ctx, e)
	if err != nil {
		log.G(ctx).Warn("checkpointing paused sandbox; it stays frozen in memory", "sandbox", id, "err", err)
		return
	}
	log.G(ctx).Info("paused sandbox checkpointed to disk", "sandbox", id, "took", time.Since(start))
	m.paused(e) // with its memory now
}

func stopTimer(t **time.Timer) {
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
}

// bootedAgain initialises envd in a sandbox that booted afresh and waits
// for its template's start command, as create does.
func (m *Manager) bootedAgain(ctx context.Context, e *entry) error {
	tpl, err := m.opts.Store.GetTemplate(ctx, e.sb.TemplateID)
	if err != nil {
		tpl = nil // deleted since: envd gets the defaults
	}
	if err := m.initEnvd(ctx, e.ip, e.sb, tpl); err != nil {
		return fmt.Errorf("starting envd after a cold boot: %w", err)
	}
	if err := m.waitReady(ctx, e.ip, e.sb, tpl); err != nil {
		return fmt.Errorf("waiting for the template's start command: %w", err)
	}
	return nil
}

// Count returns how many sandboxes the manager holds, running or paused.
func (m *Manager) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// Shutdown cancels the manager's base context and stops its timers without
// touching sandboxes (a restarted server re-adopts them), then waits until
// its background work has finished or ctx ends, reporting the latter.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.bg.mu.Lock()
	m.bg.closed = true
	m.bg.mu.Unlock()
	m.mu.Lock()
	entries := make([]*entry, 0, len(m.live))
	for _, e := range m.live {
		entries = append(entries, e)
	}
	m.mu.Unlock()
	for _, e := range entries {
		e.mu.Lock()
		stopTimer(&e.timer)
		stopTimer(&e.ckTimer)
		e.mu.Unlock()
	}
	return m.bg.close(ctx)
}
