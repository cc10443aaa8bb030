package jupyter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

const (
	// defaultStartTimeout bounds Start when ctx has no deadline: a Python
	// kernel with heavy startup scripts takes a few seconds when the
	// machine is quiet, but 4 in 206 took more than 30 s on a runsc host at
	// load 30 on 2 cores. It stays under the SDKs' 60 s request timeout, so
	// a kernel that never comes up is reported with its output rather than
	// as a client-side timeout that says nothing.
	defaultStartTimeout = 50 * time.Second
	// shutdownGrace is how long a kernel may take to honour shutdown_request
	// before it is killed.
	shutdownGrace = 2 * time.Second
	// startAttempts bounds retries when a picked port was taken meanwhile.
	startAttempts = 3
)

// KernelSpec says how to launch a kernel, as a kernel.json does.
type KernelSpec struct {
	Argv          []string // with "{connection_file}" placeholder, as in kernel.json
	Env           []string // KEY=VALUE, the whole environment of the kernel process; nil inherits ours
	Dir           string   // working directory; "" is ours
	Language      string   // informational
	InterruptMode string   // "signal" (default) or "message"
	// Settle, when positive, keeps an Execute collecting its request's
	// iopub messages until none has arrived for this long after the
	// kernel went idle: some kernels (Deno's) publish a result after idle.
	Settle time.Duration
}

// Kernel is a running kernel that survives restarts: Restart swaps the
// process underneath while callers keep the same *Kernel.
type Kernel struct {
	spec  KernelSpec
	log   *slog.Logger
	execQ fifo // execQ serialises Execute in arrival order

	lifeMu sync.Mutex // lifeMu serialises Restart and Shutdown

	mu         sync.Mutex // mu guards cur, restarting, closed and changed
	cur        *instance
	restarting bool
	closed     bool
	changed    chan struct{} // closed and replaced whenever the fields above change
}

// Start launches a kernel and returns once it answered kernel_info_request
// and its iopub channel is known to deliver to us.
func Start(ctx context.Context, spec KernelSpec) (*Kernel, error) {
	if len(spec.Argv) == 0 {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "kernel spec has an empty argv")
	}
	switch spec.InterruptMode {
	case "", "signal", "message":
	default:
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("unknown interrupt mode %q", spec.InterruptMode))
	}
	k := &Kernel{spec: spec, log: log.G(ctx).With("kernel", spec.Language), changed: make(chan struct{})}
	in, err := k.launch(ctx)
	if err != nil {
		return nil, err
	}
	k.cur = in
	return k, nil
}

// launch starts a new instance, retrying with new ports when the kernel lost
// a race for one of them.
func (k *Kernel) launch(ctx context.Context) (*instance, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	var err error
	for range startAttempts {
		var in *instance
		in, err = launch(ctx, k.spec, k.log)
		if err == nil {
			k.log.Debug("kernel started", "pid", in.pid)
			return in, nil
		}
		if !errors.Is(err, errAddrInUse) {
			break
		}
	}
	return nil, fmt.Errorf("starting %s kernel: %w", k.spec.Language, errors.Join(errdefs.ErrUnavailable, err))
}

// current returns the live instance, waiting out a restart in progress.
func (k *Kernel) current(ctx context.Context) (*instance, error) {
	for {
		k.mu.Lock()
		in, restarting, closed, changed := k.cur, k.restarting, k.closed, k.changed
		k.mu.Unlock()
		switch {
		case closed:
			return nil, errdefs.New(errdefs.ErrUnavailable, "kernel is shut down")
		case !restarting:
			return in, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// notifyLocked wakes callers waiting in current. k.mu must be held.
func (k *Kernel) notifyLocked() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// Done is closed when the current kernel process exits (crash, os._exit,
// OOM kill, Shutdown). After a Restart, call Done again for the new process.
func (k *Kernel) Done() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cur.done
}

// Pid is the current kernel process's pid (also its process group id).
func (k *Kernel) Pid() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cur.pid
}

// Info returns the content of the kernel_info_reply the current kernel gave
// at start (language_info, implementation, banner...).
func (k *Kernel) Info() json.RawMessage {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cur.kernelInfo.Content
}

// Restart stops the kernel (politely, then by force) and starts a new one
// with the same spec on new ports; all kernel state is lost. An Execute
// running meanwhile fails with ErrUnavailable; those arriving during the
// restart wait for the new kernel. If the new kernel fails to start, the
// Kernel keeps the dead instance and Restart may be tried again.
func (k *Kernel) Restart(ctx context.Context) error {
	k.lifeMu.Lock()
	defer k.lifeMu.Unlock()
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return errdefs.New(errdefs.ErrFailedPrecondition, "restarting kernel: it is shut down")
	}
	old := k.cur
	k.restarting = true
	k.notifyLocked()
	k.mu.Unlock()

	old.stop(ctx, shutdownGrace)
	in, err := k.launch(ctx)

	k.mu.Lock()
	defer k.mu.Unlock()
	k.restarting = false
	if err == nil {
		k.cur = in
	}
	k.notifyLocked()
	if err != nil {
		return fmt.Errorf("restarting kernel: %w", err)
	}
	return nil
}

// Shutdown asks the kernel to exit, kills its process group after a grace
// period (or when ctx ends), and releases everything. It is idempotent;
// later calls on the Kernel fail with ErrUnavailable.
func (k *Kernel) Shutdown(ctx context.Context) error {
	k.lifeMu.Lock()
	defer k.lifeMu.Unlock()
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	k.notifyLocked()
	in := k.cur
	k.mu.Unlock()
	in.stop(ctx, shutdownGrace)
	return nil
}
