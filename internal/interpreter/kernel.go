package interpreter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/jupyter"
)

// Kernel is what the server needs from one running Jupyter kernel. The real
// implementation is *jupyter.Kernel (wired in cmd/interpreter); tests use a
// scripted fake. The interface exists for that fake.
type Kernel interface {
	// Execute runs code and calls onMsg with each iopub message of the
	// request, in order, then returns the execute_reply. Calls are
	// serialised per kernel.
	Execute(ctx context.Context, code string, onMsg func(*jupyter.Message)) (*jupyter.Message, error)
	// ExecuteSilent runs the server's own snippets with silent=true so the
	// kernel does not count them: the user's execution_count must start at
	// 1 and not skip around hidden setup code.
	ExecuteSilent(ctx context.Context, code string) (*jupyter.Message, error)
	// Interrupt interrupts the running request; the kernel keeps its state.
	Interrupt(ctx context.Context) error
	// Restart restarts the kernel process; all state is lost.
	Restart(ctx context.Context) error
	// Shutdown stops the kernel process.
	Shutdown(ctx context.Context) error
	// Done is closed when the kernel process dies.
	Done() <-chan struct{}
}

// KernelSpec says how to launch a kernel. It mirrors jupyter.KernelSpec so
// that this package does not depend on the launcher's implementation.
type KernelSpec struct {
	Argv          []string // "{connection_file}" is substituted by the launcher
	Env           []string // full environment, KEY=VALUE
	Dir           string
	Language      string
	InterruptMode string // "signal" or "message"
	// Settle is how long to keep collecting a request's output after the
	// kernel reported it idle; see jupyter.KernelSpec.Settle.
	Settle time.Duration
}

// StartFunc launches a kernel; cmd/interpreter passes an adapter around
// jupyter.Start.
type StartFunc func(ctx context.Context, spec KernelSpec) (Kernel, error)

// KernelConfig is one entry of the kernels file.
type KernelConfig struct {
	Argv          []string          `json:"argv"`
	Env           map[string]string `json:"env,omitempty"`
	InterruptMode string            `json:"interrupt_mode,omitempty"`
}

// DefaultKernels returns the kernels known without a kernels file: IPython
// always, and Deno's kernel for JavaScript when deno is on PATH.
func DefaultKernels() map[string]KernelConfig {
	k := map[string]KernelConfig{
		"python": {Argv: []string{"python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"}},
	}
	if _, err := exec.LookPath("deno"); err == nil {
		k["javascript"] = KernelConfig{Argv: []string{"deno", "jupyter", "--kernel", "--conn", "{connection_file}"}}
	}
	return k
}

// LoadKernels reads a kernels file (a JSON object mapping language to
// KernelConfig) on top of DefaultKernels. An empty path means defaults only.
func LoadKernels(path string) (map[string]KernelConfig, error) {
	kernels := DefaultKernels()
	if path == "" {
		return kernels, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading kernels file: %w", err)
	}
	var file map[string]KernelConfig
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("parsing kernels file %s: %w", path, err)
	}
	for lang, cfg := range file {
		name, err := normalizeLanguage(lang)
		if err != nil {
			return nil, fmt.Errorf("kernels file %s: %w", path, err)
		}
		if len(cfg.Argv) == 0 {
			return nil, fmt.Errorf("kernels file %s: %s: %w", path, name, errdefs.New(errdefs.ErrInvalidArgument, "argv is empty"))
		}
		kernels[name] = cfg
	}
	return kernels, nil
}

// spec builds the launch spec for a language: the server's own environment
// plus the configured variables, started in dir.
func (c KernelConfig) spec(language, dir string) KernelSpec {
	env := os.Environ()
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic env order, later entries win
	for _, k := range keys {
		env = append(env, k+"="+c.Env[k])
	}
	return KernelSpec{
		Argv:          append([]string(nil), c.Argv...),
		Env:           env,
		Dir:           dir,
		Language:      language,
		InterruptMode: c.InterruptMode,
		Settle:        settleFor(language),
	}
}

// settleFor returns the grace period for a language's kernel. Deno's kernel
// sometimes publishes a result after reporting the request idle; without a
// short wait that result is lost (about 1 run in 8 under load).
func settleFor(language string) time.Duration {
	if language == "javascript" || language == "typescript" {
		return 25 * time.Millisecond
	}
	return 0
}
