// Package buildrun runs the template builder's RUN steps (builder.RunStep,
// the one type of a step) in build sandboxes of the sandbox manager: it is
// the builder's Runner, so neither the builder nor the manager knows the
// other.
package buildrun

import (
	"context"
	"net/http"

	"github.com/warren-sandbox/warren/internal/envdexec"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/template/builder"
)

// Box is a started build sandbox (*lifecycle.BuildSandbox).
type Box interface {
	// Envd returns the base URL of the sandbox's envd and its client.
	Envd() (base string, client *http.Client)
	// KeepLayer stops the sandbox and moves its writable layer to dir.
	KeepLayer(ctx context.Context, dir string) error
	// Destroy removes the sandbox, also when ctx is cancelled.
	Destroy(ctx context.Context)
}

// Machine starts build sandboxes; Manager adapts *lifecycle.Manager to it.
type Machine interface {
	StartBuildSandbox(ctx context.Context, s lifecycle.BuildSpec) (Box, error)
}

// Manager is the Machine of a *lifecycle.Manager.
type Manager struct{ M *lifecycle.Manager }

// StartBuildSandbox starts a build sandbox of the manager.
func (m Manager) StartBuildSandbox(ctx context.Context, s lifecycle.BuildSpec) (Box, error) {
	b, err := m.M.StartBuildSandbox(ctx, s)
	if err != nil {
		return nil, err // not a nil *BuildSandbox in a non-nil Box
	}
	return b, nil
}

// Runner is a builder.Runner over a Machine.
type Runner struct{ M Machine }

var _ builder.Runner = Runner{}

// RunBuildStep runs s in a build sandbox of its own and returns the
// command's exit code. The sandbox's writable layer is kept (at
// s.LayerDir) only for exit code 0; the sandbox is destroyed in every
// case, also when ctx is cancelled.
func (r Runner) RunBuildStep(ctx context.Context, s builder.RunStep) (int, error) {
	box, err := r.M.StartBuildSandbox(ctx, lifecycle.BuildSpec{
		Layers: s.Layers, Env: s.Env, CPUCount: s.CPUCount, MemoryMB: s.MemoryMB, AllowInternet: s.AllowInternet,
	})
	if err != nil {
		return 0, err
	}
	defer box.Destroy(ctx)
	base, client := box.Envd()
	code, err := envdexec.Run(ctx, client, base, envdexec.Command{
		Shell: s.Shell, Command: s.Command, Env: s.Env, User: s.User, Workdir: s.Workdir, Output: s.Output,
	})
	if err != nil || code != 0 {
		return code, err
	}
	return 0, box.KeepLayer(ctx, s.LayerDir)
}
