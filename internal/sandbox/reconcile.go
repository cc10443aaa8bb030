package sandbox

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
)

// Reconcile runs once at startup. It re-adopts every stored sandbox whose
// backend instance is still alive, forgets (and frees) the ones whose
// processes are gone, and destroys instances the store does not know, so a
// restart neither loses sandboxes nor leaks them.
func (m *Manager) Reconcile(ctx context.Context) error {
	records, err := m.opts.Store.ListSandboxes(ctx)
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
		inst, ok := instances[sb.ID]
		delete(instances, sb.ID)
		// A sandbox paused by Stop (a checkpoint, or its disk only) has no
		// processes by design; only the store's state tells it from a crash.
		stoppedPaused := inst != nil && inst.State == runtime.StateStopped && sb.State == store.SandboxPaused
		if ok && (inst.State == runtime.StateRunning || inst.State == runtime.StatePaused || stoppedPaused) {
			m.adopt(ctx, sb, inst, owner[sb.ID])
			adopted++
			continue
		}
		log.G(ctx).Warn("sandbox died while warren was down; forgetting it", "sandbox", sb.ID)
		if ok {
			m.destroy(ctx, owner[sb.ID], sb.ID)
		}
		if err := m.opts.Store.DeleteSandbox(ctx, sb.ID); err != nil {
			return fmt.Errorf("forgetting dead sandbox: %w", err)
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
	m.snapMu.Lock()
	m.collectLocked(ctx)
	m.snapMu.Unlock()
	return nil
}

func (m *Manager) adopt(ctx context.Context, sb *store.Sandbox, inst *runtime.Instance, b runtime.Backend) {
	ip := inst.IP
	if !ip.IsValid() {
		ip, _ = netip.ParseAddr(sb.IP)
	}
	if inst.State == runtime.StatePaused {
		sb.State = store.SandboxPaused
	}
	e := &entry{sb: sb, ip: ip, backend: b, conns: newConnSet()}
	e.running.Store(sb.State == store.SandboxRunning)
	m.mu.Lock()
	m.live[sb.ID] = e
	m.mu.Unlock()
	e.mu.Lock()
	m.armTimer(e) // an end already passed fires at once and expires it
	if !e.killed {
		m.watchInit(ctx, e, inst.Pid)
	}
	if inst.State == runtime.StatePaused && b.Capabilities().Checkpoint {
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
