package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Claimer hands a create a sandbox booted ahead for it (the pools room,
// internal/pool): one made as sb, from tpl, would be, envd not yet
// initialised. It records the demand whether or not it has one. It may
// wait a while for one about to be ready, until ctx ends at the latest;
// a create it serves takes no start turn, so the wait must be shorter
// than a cold boot's.
type Claimer interface {
	Claim(ctx context.Context, sb *store.Sandbox, tpl *store.Template) (id string, inst *runtime.Instance, ok bool)
}

// ClaimFrom makes creates from a template (not from a snapshot) ask c
// first; set before serving.
func (m *Manager) ClaimFrom(c Claimer) { m.claimer = c }

// claimWarm gives sb a pooled sandbox if the claimer has one ready or
// about to be: true when sb is now live. A pooled sandbox that fails its initialisation is
// destroyed and the create goes on cold.
func (m *Manager) claimWarm(ctx context.Context, sb *store.Sandbox, tpl *store.Template, backend runtime.Backend) bool {
	id, inst, ok := m.claimer.Claim(ctx, sb, tpl)
	if !ok {
		return false
	}
	start := time.Now()
	sb.ID, sb.IP = id, ""
	ctx = log.With(ctx, "sandbox", sb.ID, "template", tpl.ID, "runtime", sb.Backend)
	t := log.NewPhases()
	if err := m.register(ctx, sb, tpl, backend, inst, t); err != nil {
		log.G(ctx).Warn("pooled sandbox failed; starting one cold", "err", err)
		m.destroy(context.WithoutCancel(ctx), backend, sb.ID)
		sb.ID = newID()
		return false
	}
	log.G(ctx).Info("sandbox created from the pool", "ip", inst.IP, "took", time.Since(start))
	log.G(ctx).Debug("sandbox create steps", "steps", t.String())
	return true
}

// PoolRecord is the record a create with default settings (what the
// SDKs' Sandbox.create() sends) from tpl would make, for a pool to key
// on; false when tpl's runtime does not run here.
func (m *Manager) PoolRecord(tpl *store.Template) (*store.Sandbox, bool) {
	backend := m.backendOf(tpl, nil)
	if _, ok := m.opts.Backends[backend]; !ok {
		return nil, false
	}
	req := sandbox.CreateRequest{TemplateID: tpl.ID, Network: netpolicy.Default()}
	return newRecord(req, tpl, nil, backend, m.opts), true
}

// BootPooled boots a sandbox for a pool: the instance a create from tpl
// with sb's runtime, resources and policy would start, without envd's
// /init, under a new id it sets in sb. It needs the host's room for one
// more sandbox but no start turn. It boots in the background unless
// foreground (a pool that a create has just found empty). memMB is the
// host memory it holds.
func (m *Manager) BootPooled(ctx context.Context, sb *store.Sandbox, tpl *store.Template, foreground bool) (_ *runtime.Instance, memMB int, _ error) {
	backend, ok := m.opts.Backends[sb.Backend]
	if !ok {
		return nil, 0, fmt.Errorf("runtime %q is not run here", sb.Backend)
	}
	if err := m.hostRoom(ctx, sb.MemoryMB, sb.DiskMB); err != nil {
		return nil, 0, fmt.Errorf("no room for a pooled sandbox: %w", err)
	}
	sb.ID = newID()
	tpl, err := m.localTemplate(ctx, tpl)
	if err != nil {
		return nil, 0, err
	}
	spec := m.templateSpec(sb, tpl, backend)
	spec.Background = !foreground
	inst, err := backend.Create(ctx, spec)
	if err != nil {
		return nil, 0, err
	}
	err = m.waitReady(ctx, inst.IP, sb, tpl)
	if err == nil {
		err = m.quietGuard(ctx, backend, inst)
	}
	if err == nil && !foreground {
		// Booted: the background priority has done its work, and the
		// claim, which must be quick, finds nothing left to change.
		err = backend.Foreground(ctx, sb.ID)
	}
	if err != nil {
		m.destroy(context.WithoutCancel(ctx), backend, sb.ID)
		return nil, 0, err
	}
	memMB = sb.MemoryMB
	if st, err := backend.Stats(ctx, sb.ID); err == nil {
		memMB = int((st.MemoryUsed + st.MemoryCache) >> 20)
	}
	return inst, memMB, nil
}

// DestroyPooled destroys a sandbox BootPooled booted that no create
// claimed.
func (m *Manager) DestroyPooled(ctx context.Context, backend, id string) {
	if b, ok := m.opts.Backends[backend]; ok {
		m.destroy(ctx, b, id)
	}
}

// quietGuard wakes a pooled sandbox's OOM guard once, which it takes for
// the host's memory alerts being armed: until then it polls memory every
// 50 ms (2 to 3 % of a core per pooled sandbox). The alerts are armed at
// the claim; a pooled sandbox runs no user code meanwhile, and its cgroup
// still bounds it. envd may not listen yet (a template without a start
// command has nothing to wait for), so a refused connection is retried.
func (m *Manager) quietGuard(ctx context.Context, backend runtime.Backend, inst *runtime.Instance) error {
	if !backend.Capabilities().MemoryAlerts || m.opts.PollOOMGuard {
		return nil
	}
	url := "http://" + netip.AddrPortFrom(inst.IP, m.opts.EnvdPort).String() + "/memory/check"
	ctx, cancel := context.WithTimeout(ctx, m.opts.EnvdReadyTimeout)
	defer cancel()
	err := untilEnvd(ctx, func() error { return postEnvd(ctx, m.client, url, nil, "") },
		func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) })
	if err != nil {
		return fmt.Errorf("waking the OOM guard: %w", err)
	}
	return nil
}
