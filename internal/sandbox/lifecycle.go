package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// Kill destroys the sandbox and frees everything it held. Open proxied
// connections are cut, so streams in flight end with an aborted response.
func (m *Manager) Kill(ctx context.Context, id string) error {
	e, err := m.get(id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return m.killLocked(ctx, e)
}

func (m *Manager) killLocked(ctx context.Context, e *entry) error {
	if e.killed {
		return errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", e.sb.ID))
	}
	e.killed = true
	if e.timer != nil {
		e.timer.Stop()
	}
	m.mu.Lock()
	delete(m.live, e.sb.ID)
	m.mu.Unlock()
	e.conns.closeAll()
	ctx = context.WithoutCancel(ctx)
	if err := e.backend.Destroy(ctx, e.sb.ID); err != nil {
		log.G(ctx).Error("destroying sandbox", "sandbox", e.sb.ID, "err", err)
	}
	if err := m.opts.Store.DeleteSandbox(ctx, e.sb.ID); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("forgetting sandbox: %w", err)
	}
	log.G(ctx).Info("sandbox killed", "sandbox", e.sb.ID)
	return nil
}

// SetTimeout makes the sandbox end `d` from now, shortening or lengthening.
func (m *Manager) SetTimeout(ctx context.Context, id string, d time.Duration) error {
	e, err := m.get(id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sb.EndAt = time.Now().UTC().Add(d)
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		return fmt.Errorf("saving timeout: %w", err)
	}
	m.armTimer(e)
	return nil
}

// Refresh extends the sandbox's life to at least `d` from now.
func (m *Manager) Refresh(ctx context.Context, id string, d time.Duration) error {
	e, err := m.get(id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return m.extendLocked(ctx, e, d)
}

func (m *Manager) extendLocked(ctx context.Context, e *entry, d time.Duration) error {
	if end := time.Now().UTC().Add(d); end.After(e.sb.EndAt) {
		e.sb.EndAt = end
		if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
			return fmt.Errorf("saving timeout: %w", err)
		}
		m.armTimer(e)
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
	e.timer = time.AfterFunc(time.Until(e.sb.EndAt), func() { m.expire(id) })
}

// expire ends a sandbox whose timeout passed: pause it when asked at create,
// otherwise kill it.
func (m *Manager) expire(id string) {
	ctx := context.Background()
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
		if err := m.pauseLocked(ctx, e); err == nil {
			return
		}
	}
	if err := m.killLocked(ctx, e); err != nil {
		log.G(ctx).Error("expiring sandbox", "sandbox", id, "err", err)
	}
}

// Connect returns a running sandbox, extending its life to at least timeout
// from now, or resumes a paused one. resumed reports the latter.
func (m *Manager) Connect(ctx context.Context, id string, timeout time.Duration) (sb *store.Sandbox, resumed bool, err error) {
	e, err := m.get(id)
	if err != nil {
		return nil, false, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sb.State == store.SandboxPaused {
		if err := m.resumeLocked(ctx, e, timeout); err != nil {
			return nil, false, err
		}
		return copySandbox(e.sb), true, nil
	}
	if err := m.extendLocked(ctx, e, timeout); err != nil {
		return nil, false, err
	}
	return copySandbox(e.sb), false, nil
}

// Pause freezes a running sandbox. ErrConflict if it is already paused.
func (m *Manager) Pause(ctx context.Context, id string) error {
	e, err := m.get(id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return m.pauseLocked(ctx, e)
}

func (m *Manager) pauseLocked(ctx context.Context, e *entry) error {
	if e.sb.State == store.SandboxPaused {
		return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("sandbox %q is already paused", e.sb.ID))
	}
	e.conns.closeAll()
	if err := e.backend.Pause(ctx, e.sb.ID); err != nil {
		return fmt.Errorf("pausing sandbox: %w", err)
	}
	e.sb.State = store.SandboxPaused
	if e.timer != nil {
		e.timer.Stop()
	}
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		return fmt.Errorf("saving pause: %w", err)
	}
	return nil
}

func (m *Manager) resumeLocked(ctx context.Context, e *entry, timeout time.Duration) error {
	if err := e.backend.Resume(ctx, e.sb.ID); err != nil {
		return fmt.Errorf("resuming sandbox: %w", err)
	}
	e.sb.State = store.SandboxRunning
	e.sb.EndAt = time.Now().UTC().Add(timeout)
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		return fmt.Errorf("saving resume: %w", err)
	}
	m.armTimer(e)
	return nil
}

// Count returns how many sandboxes the manager holds, running or paused.
func (m *Manager) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// Shutdown stops timers without touching sandboxes: a restarted server
// re-adopts them.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	entries := make([]*entry, 0, len(m.live))
	for _, e := range m.live {
		entries = append(entries, e)
	}
	m.mu.Unlock()
	for _, e := range entries {
		e.mu.Lock()
		if e.timer != nil {
			e.timer.Stop()
		}
		e.mu.Unlock()
	}
}
