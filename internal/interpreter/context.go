package interpreter

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
)

// hiddenTimeout bounds the server's own snippets (cwd, env vars), which
// must not hang a context forever if a kernel stops answering. It is far
// above what they take (milliseconds) because a fresh kernel's first
// execution on a saturated machine took more than 30 s, and a busy machine
// should make a context slow to create, not fail it.
const hiddenTimeout = 2 * time.Minute

// Context is one execution context: a kernel with its own state, its
// language and working directory, and a queue that runs executions in
// arrival order.
type Context struct {
	ID       string
	Language string
	Cwd      string

	seq   uint64 // creation order, for listing
	lang  *language
	spec  KernelSpec
	start StartFunc
	env   *globalEnv
	opts  *Options

	queue fifo // held for the whole of an execution, a restart or a replace

	mu         sync.Mutex // mu protects kernel and envApplied
	kernel     Kernel
	envApplied bool // the sandbox's global env is set in this kernel
}

// contextInfo is the JSON shape of a context in the API.
type contextInfo struct {
	ID       string `json:"id"`
	Language string `json:"language"`
	Cwd      string `json:"cwd"`
}

func (c *Context) info() contextInfo {
	return contextInfo{ID: c.ID, Language: c.Language, Cwd: c.Cwd}
}

// launch starts a kernel for the context and moves it to the context's
// working directory, the way the reference server does (a snippet, not the
// process's cwd, so a restart behaves the same).
func (c *Context) launch(ctx context.Context) (Kernel, error) {
	k, err := c.start(ctx, c.spec)
	if err != nil {
		return nil, fmt.Errorf("starting %s kernel: %w", c.Language, err)
	}
	if err := c.setup(ctx, k); err != nil {
		shutdownKernel(ctx, k)
		return nil, err
	}
	return k, nil
}

// setup runs the per-kernel snippets on a fresh or restarted kernel.
func (c *Context) setup(ctx context.Context, k Kernel) error {
	if err := silent(ctx, k, c.lang.chdir(c.Cwd)); err != nil {
		return fmt.Errorf("changing directory to %s: %w", c.Cwd, err)
	}
	return nil
}

func (c *Context) current() Kernel {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kernel
}

// ready returns a kernel that is alive and has the sandbox's global env,
// and whether it had to replace a kernel that died while idle: nobody saw
// that death, so the caller must tell the client its state is gone. The
// caller holds the queue.
func (c *Context) ready(ctx context.Context) (k Kernel, replaced bool, err error) {
	k = c.current()
	if k == nil { // declared, never started: nothing was lost
		if err := c.replace(ctx); err != nil {
			return nil, false, err
		}
		k = c.current()
	}
	select {
	case <-k.Done():
		log.G(ctx).Warn("kernel died while idle, restarting")
		if err := c.replace(ctx); err != nil {
			return nil, false, err
		}
		k, replaced = c.current(), true
	default:
	}
	if err := c.applyEnv(ctx, k); err != nil {
		return nil, replaced, err // replaced still holds: the state is gone
	}
	return k, replaced, nil
}

// applyEnv sets the sandbox's global env once per kernel.
func (c *Context) applyEnv(ctx context.Context, k Kernel) error {
	c.mu.Lock()
	applied := c.envApplied
	c.mu.Unlock()
	vars := c.env.get()
	if applied || len(vars) == 0 {
		return nil
	}
	if err := silent(ctx, k, c.lang.setEnv(vars)); err != nil {
		return fmt.Errorf("applying the sandbox env: %w", err)
	}
	c.mu.Lock()
	c.envApplied = true
	c.mu.Unlock()
	return nil
}

// replace throws the kernel away and launches a new one: used when the
// kernel died or ignored an interrupt, and to start a declared context's
// first kernel. The caller holds the queue. On
// failure the old kernel stays, and the next execution tries again.
func (c *Context) replace(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	shutdownKernel(ctx, c.current())
	k, err := c.launch(ctx)
	if err != nil {
		return fmt.Errorf("replacing the kernel of context %s: %w", c.ID, err)
	}
	c.mu.Lock()
	c.kernel, c.envApplied = k, false
	c.mu.Unlock()
	return nil
}

// restart is POST /contexts/{id}/restart: a running execution is
// interrupted first so the restart does not wait behind it.
func (c *Context) restart(ctx context.Context) error {
	if k := c.current(); k != nil && c.queue.busy() {
		if err := k.Interrupt(ctx); err != nil {
			log.G(ctx).Warn("interrupt before restart failed", "err", err)
		}
	}
	if err := c.queue.lock(ctx); err != nil {
		return fmt.Errorf("waiting for the running execution: %w", err)
	}
	defer c.queue.unlock()
	k := c.current()
	if k == nil {
		return nil // never started: the first execution gets a fresh kernel
	}
	err := k.Restart(ctx)
	if err == nil {
		err = c.setup(ctx, k)
	}
	if err != nil {
		log.G(ctx).Warn("kernel restart failed, launching a new kernel", "err", err)
		return c.replace(ctx)
	}
	c.mu.Lock()
	c.envApplied = false
	c.mu.Unlock()
	return nil
}

// shutdown stops the kernel for good.
func (c *Context) shutdown(ctx context.Context) {
	shutdownKernel(ctx, c.current())
}

func shutdownKernel(ctx context.Context, k Kernel) {
	if k == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := k.Shutdown(ctx); err != nil {
		log.G(ctx).Debug("kernel shutdown", "err", err)
	}
}

// silent runs server code whose output nobody sees; it fails when the code
// raised.
func silent(ctx context.Context, k Kernel, code string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hiddenTimeout)
	defer cancel()
	reply, err := k.ExecuteSilent(ctx, code)
	if err != nil {
		return fmt.Errorf("running hidden code: %w", err)
	}
	if reply == nil {
		return nil
	}
	var ct struct {
		Status string `json:"status"`
		Ename  string `json:"ename"`
		Evalue string `json:"evalue"`
	}
	if err := json.Unmarshal(reply.Content, &ct); err != nil {
		return fmt.Errorf("decoding execute_reply: %w", err)
	}
	if ct.Status != "" && ct.Status != "ok" {
		return fmt.Errorf("hidden code failed (%s): %s: %s", ct.Status, ct.Ename, ct.Evalue)
	}
	return nil
}
