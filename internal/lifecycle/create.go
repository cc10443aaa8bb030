package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Create starts a sandbox from a template, or from a snapshot when
// TemplateID names one, and returns its record once envd inside answers.
// On any error nothing is left behind.
func (m *Manager) Create(ctx context.Context, req sandbox.CreateRequest) (*store.Sandbox, error) {
	tpl, err := store.ResolveTemplate(ctx, m.opts.Store, req.TemplateID)
	if err == nil && !req.AnyTeam && !tpl.Public && store.TeamOf(tpl.TeamID) != store.TeamOf(req.TeamID) {
		err = errdefs.New(errdefs.ErrNotFound, "another team's template")
	}
	if err == nil {
		if tpl.RootfsPath == "" {
			return nil, errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("template '%s' has no ready build yet", req.TemplateID))
		}
		return m.create(ctx, req, tpl, nil)
	}
	if !errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("looking up template: %w", err)
	}
	// The snapshot's layers must outlive the create: the collector waits.
	defer m.holdSnapshots()()
	snap, err := m.opts.Store.GetSnapshot(ctx, req.TemplateID)
	if err == nil && !req.AnyTeam && store.TeamOf(snap.TeamID) != store.TeamOf(req.TeamID) {
		err = errdefs.New(errdefs.ErrNotFound, "another team's snapshot")
	}
	if errdefs.IsNotFound(err) {
		return nil, errdefs.New(errdefs.ErrNotFound, m.templateNotFound(req.TemplateID))
	}
	if err != nil {
		return nil, fmt.Errorf("looking up snapshot: %w", err)
	}
	if tpl, err = m.opts.Store.GetTemplate(ctx, snap.TemplateID); err != nil {
		return nil, fmt.Errorf("template %q of snapshot %q: %w", snap.TemplateID, snap.ID, err)
	}
	return m.create(ctx, req, tpl, snap)
}

// templateNotFound is the message for a create of an unknown template,
// with the way to enable it when it is one this server leaves out.
func (m *Manager) templateNotFound(id string) string {
	msg := fmt.Sprintf("template '%s' not found", id)
	if hint := m.opts.TemplateHints[id]; hint != "" {
		msg += ": " + hint
	}
	return msg
}

// create makes the sandbox from tpl, or from snap when it is set (the
// caller holds the collector off: holdSnapshots).
func (m *Manager) create(ctx context.Context, req sandbox.CreateRequest, tpl *store.Template, snap *store.Snapshot) (_ *store.Sandbox, retErr error) {
	backendName := m.backendOf(tpl, snap)
	defer func(start time.Time) { m.observe(sandbox.OpCreate, backendName, start, retErr) }(time.Now())
	backend, ok := m.opts.Backends[backendName]
	if !ok {
		return nil, errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("template '%s' needs runtime %q, which this server does not run", req.TemplateID, backendName))
	}
	sb := newRecord(req, tpl, snap, backendName, m.opts)
	mounts, err := m.createMounts(ctx, req, sb.TeamID, snap)
	if err != nil {
		return nil, err
	}
	sb.VolumeMounts = mounts
	release, err := m.admit(ctx, sb.TeamID, sb.CPUCount, sb.MemoryMB)
	if err != nil {
		return nil, err
	}
	// Released once the sandbox is live (and counted there) or failed.
	defer release()
	if req.Secure {
		sb.EnvdAccessToken = newToken()
	}
	if err := m.checkDomains(sb.Network.Egress); err != nil {
		return nil, err
	} else if sb.Network.Private {
		// allowPublicTraffic: false: every port but envd's wants this token.
		sb.TrafficAccessToken = newToken()
	}
	// A pooled sandbox already holds its memory and disk and costs the
	// CPUs little more to hand over: only a cold start waits its turn.
	// (The pools room hands none to a create with volumes: a running
	// container cannot gain a mount.)
	if m.claimer != nil && snap == nil && m.claimWarm(ctx, sb, tpl, backend) {
		return copySandbox(sb), nil
	}
	done, err := m.startTurn(ctx, sandbox.OpCreate, sb.TeamID, sb.MemoryMB, sb.DiskMB)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx = log.With(ctx, "sandbox", sb.ID, "template", tpl.ID, "runtime", backendName)
	if tpl, err = m.localTemplate(ctx, tpl); err != nil {
		return nil, err
	}
	spec := m.templateSpec(sb, tpl, backend)
	if spec.Mounts, err = m.hostMounts(ctx, sb.VolumeMounts); err != nil {
		return nil, err
	}
	if snap != nil {
		spec.From = &runtime.Snapshot{Dir: snap.Dir, Layers: snap.Layers, Memory: snap.Memory}
		spec.Hostname = snap.Hostname
	}
	if err := m.start(ctx, sb, tpl, backend, spec); err != nil {
		return nil, err
	}
	return copySandbox(sb), nil
}

// localTemplate is tpl with its layers on this node (Options.LocalTemplate).
func (m *Manager) localTemplate(ctx context.Context, tpl *store.Template) (*store.Template, error) {
	if m.opts.LocalTemplate == nil {
		return tpl, nil
	}
	local, err := m.opts.LocalTemplate(ctx, tpl)
	if err != nil {
		return nil, fmt.Errorf("preparing the layers: %w", err)
	}
	return local, nil
}

// backendOf is the runtime a create from tpl, or from snap when it is
// set, runs on.
func (m *Manager) backendOf(tpl *store.Template, snap *store.Snapshot) string {
	name := tpl.Backend
	if snap != nil {
		name = snap.Backend
	}
	if name == "" {
		name = m.opts.DefaultBackend
	}
	return name
}

// templateSpec is what a create from tpl starts: the sandbox's spec, envd's
// OOM guard, and a built template's stack of layers (shared with its
// parents). A create from a snapshot replaces the layers; a pooled
// sandbox boots from exactly this.
func (m *Manager) templateSpec(sb *store.Sandbox, tpl *store.Template, backend runtime.Backend) runtime.Spec {
	spec := m.spec(sb, tpl)
	m.guardArgs(&spec, backend)
	if len(tpl.Layers) > 1 {
		spec.From = &runtime.Snapshot{Layers: tpl.Layers}
	}
	return spec
}

// guardArgs gives envd its OOM guard. Every sandbox has one: under gVisor
// the host's OOM killer would take the whole sandbox; on the host's
// kernel a cgroup near its limit thrashes on its page cache long before
// that killer acts, so the guard measures the sandbox's own cgroup there.
func (m *Manager) guardArgs(spec *runtime.Spec, backend runtime.Backend) {
	caps := backend.Capabilities()
	spec.Init.Args = append(spec.Init.Args, "--oom-guard")
	if !caps.OwnKernel {
		spec.Init.Args = append(spec.Init.Args, "--oom-guard-cgroup=/sys/fs/cgroup", "--reserve-threads=32")
	}
	if caps.MemoryAlerts && !m.opts.PollOOMGuard {
		// Woken by the host's alerts (watchMemory) instead of polling.
		spec.Init.Args = append(spec.Init.Args, "--oom-guard-on-wake")
	}
}

func mergeMaps(base, over map[string]string) map[string]string {
	if len(base) == 0 {
		return over
	}
	out := copyMap(base)
	for k, v := range over {
		out[k] = v
	}
	return out
}

// start brings up the backend instance, initialises envd and records the
// sandbox, undoing all of it if a later step fails.
func (m *Manager) start(ctx context.Context, sb *store.Sandbox, tpl *store.Template, backend runtime.Backend, spec runtime.Spec) (retErr error) {
	start := time.Now()
	t := log.NewPhases()
	inst, err := backend.Create(ctx, spec)
	if err != nil {
		return fmt.Errorf("creating sandbox: %w", err)
	}
	t.Done("backend")
	defer func() {
		if retErr != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := backend.Destroy(cctx, sb.ID); err != nil {
				log.G(ctx).Error("cleaning up failed sandbox", "err", err)
			}
		}
	}()
	crashpoint.Hit("create.backend")
	if err := m.register(ctx, sb, tpl, backend, inst, t); err != nil {
		return err
	}
	log.G(ctx).Info("sandbox created", "ip", inst.IP, "took", time.Since(start))
	log.G(ctx).Debug("sandbox create steps", "steps", t.String())
	return nil
}

func (m *Manager) spec(sb *store.Sandbox, tpl *store.Template) runtime.Spec {
	// JSON records: the runtime keeps envd's output as the sandbox's log,
	// which the logs endpoints read back (package sandboxlog).
	args := []string{envdTarget, "--port", fmt.Sprint(wire.EnvdPort), "--log-json"}
	if tpl.StartCmd != "" {
		// envd supervises the template's start command (the code
		// interpreter server, a user's service) from boot.
		args = append(args, startCmdArgs(tpl)...)
	}
	binds := append([]runtime.Bind{{Source: m.opts.EnvdPath, Target: envdTarget}}, m.opts.Binds...)
	return runtime.Spec{
		ID:       sb.ID,
		Rootfs:   tpl.RootfsPath,
		Hostname: hostname(sb.ID),
		Init: runtime.Process{
			Args: args,
			Env:  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"},
			Cwd:  "/",
		},
		Binds: binds,
		Resources: runtime.Resources{
			CPUCount: sb.CPUCount,
			MemoryMB: sb.MemoryMB,
			DiskMB:   sb.DiskMB,
		},
		Network: sb.Network.Egress.Clone(),
		Labels:  map[string]string{"warren.sandbox": sb.ID, "warren.template": tpl.ID},
	}
}

// hostname is a sandbox's host name, as E2B names them.
func hostname(id string) string { return "e2b-" + id[:8] }

// envdTarget is where envd's binary appears inside every sandbox.
const envdTarget = "/.warren/envd"

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// startCmdArgs are envd's flags for the template's start command: it runs
// as the template's user, in its workdir, with its environment.
func startCmdArgs(tpl *store.Template) []string {
	args := []string{"--cmd", tpl.StartCmd}
	if tpl.User != "" {
		args = append(args, "--cmd-user", tpl.User)
	}
	if tpl.Workdir != "" {
		args = append(args, "--cmd-cwd", tpl.Workdir)
	}
	for _, k := range slices.Sorted(maps.Keys(tpl.Env)) {
		args = append(args, "--cmd-env", k+"="+tpl.Env[k])
	}
	return args
}

// newRecord is the sandbox record a create makes: the template's (or the
// snapshot's) resources and environment, overridden by the request's.
func newRecord(req sandbox.CreateRequest, tpl *store.Template, snap *store.Snapshot, backendName string, opts Options) *store.Sandbox {
	now := time.Now().UTC()
	sb := &store.Sandbox{
		ID:                newID(),
		TemplateID:        tpl.ID,
		Backend:           backendName,
		State:             store.SandboxRunning,
		Metadata:          req.Metadata,
		EnvVars:           req.EnvVars,
		CPUCount:          orDefault(tpl.CPUCount, opts.DefaultCPUCount),
		MemoryMB:          orDefault(tpl.MemoryMB, opts.DefaultMemoryMB),
		DiskMB:            orDefault(tpl.DiskMB, opts.DefaultDiskMB),
		StartedAt:         now,
		EndAt:             now.Add(req.Timeout),
		AutoPause:         req.AutoPause,
		AutoPauseNoMemory: req.AutoPauseNoMemory,
		AutoResume:        req.AutoResume,
		Network:           req.Network.Clone(),
		APIKeyID:          req.APIKeyID,
		TeamID:            store.TeamOf(req.TeamID),
	}
	if req.TemplateID != tpl.ID {
		sb.Alias = req.TemplateID
	} else if len(tpl.Aliases) > 0 {
		sb.Alias = tpl.Aliases[0]
	}
	if req.CPUCount > 0 {
		sb.CPUCount = req.CPUCount
	}
	if req.MemoryMB > 0 {
		sb.MemoryMB = req.MemoryMB
	}
	if snap != nil {
		// The snapshot's processes were started with its resources and
		// environment; a sandbox made from it keeps them.
		sb.CPUCount, sb.MemoryMB, sb.DiskMB = snap.CPUCount, snap.MemoryMB, snap.DiskMB
		sb.EnvVars = mergeMaps(snap.EnvVars, req.EnvVars)
		sb.Alias = req.TemplateID
	} else {
		sb.EnvVars = mergeMaps(tpl.Env, req.EnvVars)
	}
	return sb
}

// register hands a running instance to its sandbox: envd initialised with
// the sandbox's token, env vars and user, the template's start command
// ready, the record stored, and the sandbox live with its timer.
func (m *Manager) register(ctx context.Context, sb *store.Sandbox, tpl *store.Template, backend runtime.Backend, inst *runtime.Instance, t *log.Phases) error {
	sb.IP = inst.IP.String()
	if err := m.initEnvd(ctx, inst.IP, sb, tpl); err != nil {
		return fmt.Errorf("starting envd: %w", err)
	}
	t.Done("envd")
	if err := m.waitReady(ctx, inst.IP, sb, tpl); err != nil {
		return fmt.Errorf("waiting for the template's start command: %w", err)
	}
	t.Done("ready")
	sb.Node = m.opts.NodeName
	// Its lifetime starts now that it can be used: neither a wait for its
	// turn nor a slow boot eats into the timeout the user asked for.
	now := time.Now().UTC()
	sb.StartedAt, sb.EndAt = now, now.Add(sb.EndAt.Sub(sb.StartedAt))
	if err := m.opts.Store.CreateSandbox(ctx, sb); err != nil {
		if errors.Is(err, errdefs.ErrUnavailable) {
			m.forgetLater(ctx, sb.ID, nil) // it may have been stored
		}
		return fmt.Errorf("recording sandbox: %w", err)
	}
	t.Done("store")
	crashpoint.Hit("create.recorded")
	e := &entry{sb: sb, ip: inst.IP, backend: backend, conns: newConnSet()}
	e.running.Store(true)
	m.mu.Lock()
	m.live[sb.ID] = e
	m.mu.Unlock()
	e.mu.Lock()
	m.armTimer(e)
	m.watchInit(ctx, e, inst.Pid)
	m.emitCreated(ctx, e, tpl)
	e.mu.Unlock()
	t.Done("register")
	return nil
}
