package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
)

// BuildSpec is the sandbox a template build's RUN step runs in: isolated
// exactly as users' sandboxes are (same backend, network policy and
// limits) but not listed, timed or proxied. What runs in it, and how, is
// the builder's (builder.RunStep).
type BuildSpec struct {
	Layers        []string // read-only layers, top first
	Env           map[string]string
	CPUCount      int
	MemoryMB      int
	AllowInternet bool
	Backend       string // "" = the server's default
}

// BuildSandbox is a started build sandbox with envd answering in it. Its
// owner runs commands through envd, then keeps its layer or not, and
// destroys it in every case.
type BuildSandbox struct {
	m       *Manager
	backend runtime.Backend
	id      string
	ip      netip.Addr
	phases  *log.Phases
}

// StartBuildSandbox creates a build sandbox over s.Layers and waits for
// its envd. On error nothing is left behind.
func (m *Manager) StartBuildSandbox(ctx context.Context, s BuildSpec) (*BuildSandbox, error) {
	name := s.Backend
	if name == "" {
		name = m.opts.DefaultBackend
	}
	backend, ok := m.opts.Backends[name]
	if !ok {
		return nil, errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("runtime %q is not run by this server", name))
	}
	if len(s.Layers) == 0 {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "a build sandbox needs at least one layer")
	}
	sb := &store.Sandbox{
		ID: newID(), TemplateID: "build", Backend: name, EnvVars: s.Env,
		Network:  netpolicy.Policy{Egress: netpolicy.Egress{AllowInternet: s.AllowInternet}},
		CPUCount: orDefault(s.CPUCount, m.opts.DefaultCPUCount),
		MemoryMB: orDefault(s.MemoryMB, m.opts.DefaultMemoryMB),
		DiskMB:   m.opts.DefaultDiskMB,
	}
	spec := m.spec(sb, &store.Template{ID: "build", RootfsPath: s.Layers[len(s.Layers)-1]})
	spec.From = &runtime.Snapshot{Layers: s.Layers}
	spec.Labels["warren.build"] = "1"
	ctx = log.With(ctx, "buildSandbox", sb.ID)
	t := log.NewPhases()
	inst, err := backend.Create(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("creating build sandbox: %w", err)
	}
	t.Done("create")
	crashpoint.Hit("build.run")
	b := &BuildSandbox{m: m, backend: backend, id: sb.ID, ip: inst.IP, phases: t}
	if err := m.initEnvd(ctx, inst.IP, sb, &store.Template{User: "root", Workdir: "/"}); err != nil {
		b.Destroy(ctx)
		return nil, fmt.Errorf("starting envd in the build sandbox: %w", err)
	}
	t.Done("envd")
	return b, nil
}

// Envd returns the base URL of the sandbox's envd and the HTTP client to
// reach it with.
func (b *BuildSandbox) Envd() (base string, client *http.Client) {
	return "http://" + netip.AddrPortFrom(b.ip, b.m.opts.EnvdPort).String(), b.m.client
}

// KeepLayer stops the build sandbox and moves its writable layer to dir,
// which must not exist.
func (b *BuildSandbox) KeepLayer(ctx context.Context, dir string) error {
	defer b.phases.Done("layer")
	if err := b.backend.Stop(ctx, b.id, runtime.StopOptions{}); err != nil {
		return fmt.Errorf("stopping build sandbox: %w", err)
	}
	tmp := dir + ".snap"
	snap, err := b.backend.Snapshot(ctx, b.id, tmp)
	if err != nil {
		return fmt.Errorf("taking the build sandbox's layer: %w", err)
	}
	defer os.RemoveAll(tmp)
	if len(snap.Layers) == 0 || filepath.Dir(snap.Layers[0]) != tmp {
		return errors.New("taking the build sandbox's layer: the backend returned no layer of its own")
	}
	if err := os.Rename(snap.Layers[0], dir); err != nil {
		return fmt.Errorf("moving the build layer: %w", err)
	}
	return nil
}

// Destroy removes the build sandbox, also when ctx is cancelled.
func (b *BuildSandbox) Destroy(ctx context.Context) {
	ctx = log.With(context.WithoutCancel(ctx), "buildSandbox", b.id)
	b.m.destroy(ctx, b.backend, b.id)
	b.phases.Done("destroy")
	log.G(ctx).Debug("build sandbox ran", "phases", b.phases.String())
}
