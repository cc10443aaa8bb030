package lifecycle

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"io"
	"net/netip"
	"os"
	"path/filepath"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
)

// BuildStep is one RUN of a template build: a command run in a sandbox of
// its own, on the layers built so far, whose disk changes become the next
// layer. Build sandboxes are isolated exactly as users' are (same backend,
// network policy and limits) but are not listed, timed or proxied.
type BuildStep struct {
	Layers        []string // read-only layers, top first
	Env           map[string]string
	User          string // "" = root
	Workdir       string // "" = /
	Shell         []string
	Command       string
	CPUCount      int
	MemoryMB      int
	AllowInternet bool
	Output        io.Writer // stdout and stderr, as they come
	// LayerDir receives the sandbox's writable layer when the command
	// succeeds; it must not exist.
	LayerDir string
	Backend  string // "" = the server's default
	// token is the sandbox's envd access token (ready checks of secure
	// sandboxes).
	token string
}

// RunBuildStep runs s and returns the command's exit code. The writable
// layer is kept (at s.LayerDir) only for exit code 0. The sandbox is
// destroyed in every case, also when ctx is cancelled.
func (m *Manager) RunBuildStep(ctx context.Context, s BuildStep) (int, error) {
	name := s.Backend
	if name == "" {
		name = m.opts.DefaultBackend
	}
	backend, ok := m.opts.Backends[name]
	if !ok {
		return 0, errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("runtime %q is not run by this server", name))
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
		return 0, fmt.Errorf("creating build sandbox: %w", err)
	}
	t.Done("create")
	crashpoint.Hit("build.run")
	defer func() {
		m.destroy(context.WithoutCancel(ctx), backend, sb.ID)
		t.Done("destroy")
		log.G(ctx).Debug("build step ran", "phases", t.String())
	}()
	if err := m.initEnvd(ctx, inst.IP, sb, &store.Template{User: "root", Workdir: "/"}); err != nil {
		return 0, fmt.Errorf("starting envd in the build sandbox: %w", err)
	}
	t.Done("envd")
	code, err := m.runInSandbox(ctx, inst.IP, s)
	t.Done("run")
	if err != nil || code != 0 {
		return code, err
	}
	err = m.keepLayer(ctx, backend, sb.ID, s.LayerDir)
	t.Done("layer")
	return 0, err
}

// keepLayer stops the build sandbox and moves its writable layer to dir.
func (m *Manager) keepLayer(ctx context.Context, backend runtime.Backend, id, dir string) error {
	if err := backend.Stop(ctx, id, runtime.StopOptions{}); err != nil {
		return fmt.Errorf("stopping build sandbox: %w", err)
	}
	tmp := dir + ".snap"
	snap, err := backend.Snapshot(ctx, id, tmp)
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

// runInSandbox runs the command through envd's process service and streams
// its output.
func (m *Manager) runInSandbox(ctx context.Context, ip netip.Addr, s BuildStep) (int, error) {
	url := "http://" + netip.AddrPortFrom(ip, m.opts.EnvdPort).String()
	client := processconnect.NewProcessClient(m.client, url)
	shell := s.Shell
	if len(shell) == 0 {
		shell = []string{"/bin/sh", "-c"}
	}
	cfg := &pb.ProcessConfig{Cmd: shell[0], Args: append(shell[1:len(shell):len(shell)], s.Command), Envs: s.Env}
	if s.Workdir != "" {
		cfg.Cwd = &s.Workdir
	}
	req := connect.NewRequest(&pb.StartRequest{Process: cfg})
	user := s.User
	if user == "" {
		user = "root"
	}
	req.Header().Set("Authorization", "Basic "+basicUser(user))
	if s.token != "" {
		req.Header().Set("X-Access-Token", s.token)
	}
	stream, err := client.Start(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("starting the command: %w", err)
	}
	defer stream.Close()
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		if d := ev.GetData(); d != nil && s.Output != nil {
			_, _ = s.Output.Write(d.GetStdout())
			_, _ = s.Output.Write(d.GetStderr())
		}
		if end := ev.GetEnd(); end != nil {
			if !end.GetExited() {
				return -1, fmt.Errorf("the command did not exit normally (%s)", end.GetError())
			}
			return int(end.GetExitCode()), nil
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("running the command: %w", err)
	}
	return 0, errors.New("running the command: the stream ended without an exit status")
}

func basicUser(user string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":"))
}
