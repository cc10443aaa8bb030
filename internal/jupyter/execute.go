package jupyter

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// executeRequest is the content of execute_request.
type executeRequest struct {
	Code            string         `json:"code"`
	Silent          bool           `json:"silent"`
	StoreHistory    bool           `json:"store_history"`
	UserExpressions map[string]any `json:"user_expressions"`
	AllowStdin      bool           `json:"allow_stdin"`
	StopOnError     bool           `json:"stop_on_error"`
}

// Execute runs code and returns the execute_reply. onMsg (may be nil) is
// called, on the caller's goroutine and in order, for every iopub message of
// this request until the kernel goes idle for it; a slow onMsg slows the
// kernel's reader instead of buffering output. If ctx ends first Execute
// returns ctx.Err() and the code keeps running: the caller decides whether
// to Interrupt. Executes queue in arrival order. A kernel that dies
// meanwhile yields an ErrUnavailable error.
func (k *Kernel) Execute(ctx context.Context, code string, onMsg func(*Message)) (*Message, error) {
	if err := k.execQ.lock(ctx); err != nil {
		return nil, err
	}
	defer k.execQ.unlock()
	in, err := k.current(ctx)
	if err != nil {
		return nil, fmt.Errorf("executing code: %w", err)
	}
	return in.execute(ctx, newExecuteRequest(code, false), onMsg)
}

// ExecuteSilent runs code the user did not write (setup snippets): with
// silent=true and store_history=false the kernel neither increments its
// execution_count nor publishes execute_input/execute_result, so the
// user's numbering stays 1, 2, 3. It still sends status busy/idle and an
// execute_reply, so it waits and fails like Execute. Output is discarded.
func (k *Kernel) ExecuteSilent(ctx context.Context, code string) (*Message, error) {
	if err := k.execQ.lock(ctx); err != nil {
		return nil, err
	}
	defer k.execQ.unlock()
	in, err := k.current(ctx)
	if err != nil {
		return nil, fmt.Errorf("executing silent code: %w", err)
	}
	return in.execute(ctx, newExecuteRequest(code, true), nil)
}

// newExecuteRequest builds the content of an execute_request.
// stop_on_error=false: we never queue a request behind another (see
// abandon), so there is nothing for it to abort; and ipykernel keeps
// aborting for a moment after an error (until a callback it schedules
// runs), so with true the request right after a failed one is sometimes
// answered "aborted" without running.
func newExecuteRequest(code string, silent bool) executeRequest {
	return executeRequest{
		Code: code, Silent: silent, StoreHistory: !silent,
		UserExpressions: map[string]any{}, StopOnError: false,
	}
}

func (in *instance) execute(ctx context.Context, content executeRequest, onMsg func(*Message)) (*Message, error) {
	if err := in.awaitDrained(ctx); err != nil {
		return nil, err
	}
	req, err := in.request("execute_request", content, in.shell, true)
	if err != nil {
		return nil, fmt.Errorf("executing code: %w", err)
	}
	var reply *Message
	idle := false
	for !idle || reply == nil {
		select {
		case m := <-req.iopub:
			if onMsg != nil {
				onMsg(m)
			}
			idle = idle || isIdle(m)
		case reply = <-req.reply:
		case <-ctx.Done():
			in.abandon(req, idle, reply != nil)
			return nil, ctx.Err()
		case <-in.done:
			in.forget(req)
			return nil, fmt.Errorf("executing code: %w", in.deadErr())
		}
	}
	in.linger(req, onMsg)
	in.forget(req)
	return reply, nil
}

// linger delivers iopub messages of req that arrive within the kernel's
// Settle period after it went idle, restarting the period on each.
func (in *instance) linger(req *request, onMsg func(*Message)) {
	if in.settle <= 0 {
		return
	}
	t := time.NewTimer(in.settle)
	defer t.Stop()
	for {
		select {
		case m := <-req.iopub:
			if onMsg != nil {
				onMsg(m)
			}
			t.Reset(in.settle)
		case <-t.C:
			return
		case <-in.done:
			return
		}
	}
}

// abandon hands a request whose caller gave up to a goroutine that consumes
// the rest of its messages, so the next execute can wait for the kernel to
// finish it. Sending the next request earlier would queue it behind the old
// one, and if that one ends in an error (as an interrupted one does) the
// kernel aborts everything queued (stop_on_error).
func (in *instance) abandon(req *request, idle, replied bool) {
	drained := make(chan struct{})
	in.drained = drained
	// Not in wg: it ends by itself at the latest when the process is reaped,
	// which stop waits for.
	go func() {
		defer close(drained)
		defer in.forget(req)
		for !idle || !replied {
			select {
			case m := <-req.iopub:
				idle = idle || isIdle(m)
			case <-req.reply:
				replied = true
			case <-in.done:
				return
			}
		}
	}()
}

// awaitDrained waits until an abandoned execute has finished in the kernel.
func (in *instance) awaitDrained(ctx context.Context) error {
	if in.drained == nil {
		return nil
	}
	select {
	case <-in.drained:
		in.drained = nil
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-in.done:
		return fmt.Errorf("executing code: %w", in.deadErr())
	}
}

func isIdle(m *Message) bool {
	if m.Type() != "status" {
		return false
	}
	var s StatusContent
	return m.Decode(&s) == nil && s.ExecutionState == "idle"
}

// request registers and sends a new request on z. The caller must forget it.
func (in *instance) request(msgType string, content any, z *zsock, wantIOPub bool) (*request, error) {
	select {
	case <-in.done:
		return nil, in.deadErr()
	default:
	}
	m, err := in.sess.newMessage(msgType, content)
	if err != nil {
		return nil, err
	}
	req := newRequest(wantIOPub)
	in.register(m.Header.MsgID, req)
	if err := in.sendMsg(z, m); err != nil {
		in.forget(req)
		return nil, fmt.Errorf("%w: %w", errdefs.ErrUnavailable, err)
	}
	return req, nil
}

func (in *instance) register(id string, req *request) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.pending[id] = req
}

// forget unregisters every id of req and releases a reader blocked on it.
func (in *instance) forget(req *request) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for id, r := range in.pending {
		if r == req {
			delete(in.pending, id)
		}
	}
	close(req.gone)
}

// waitReady sends kernel_info_request until a reply arrived and iopub has
// delivered a status message. A kernel's PUB socket drops what it publishes
// before our subscription reaches it, so a reply alone does not prove that
// the first execute's output would reach us; each nudge makes the kernel
// publish busy/idle again until one gets through.
func (in *instance) waitReady(ctx context.Context) error {
	req := newRequest(false)
	defer in.forget(req)
	for {
		m, err := in.sess.newMessage("kernel_info_request", struct{}{})
		if err != nil {
			return err
		}
		// Every nudge shares req: whichever reply comes first will do.
		in.register(m.Header.MsgID, req)
		if err := in.sendMsg(in.shell, m); err != nil {
			return err
		}
		if in.kernelInfo == nil {
			if err := in.awaitReply(ctx, req, time.Second); err != nil {
				return err
			}
		}
		if in.kernelInfo != nil {
			select {
			case <-in.sawStatus:
				return nil
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return fmt.Errorf("waiting for the kernel's first iopub status: %w (kernel output: %q)", ctx.Err(), in.out.String())
			case <-in.done:
				return in.startExitErr()
			}
		}
	}
}

// awaitReply waits up to wait for req's reply, recording it as kernelInfo.
func (in *instance) awaitReply(ctx context.Context, req *request, wait time.Duration) error {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case m := <-req.reply:
		in.kernelInfo = m
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for kernel_info_reply: %w (kernel output: %q)", ctx.Err(), in.out.String())
	case <-in.done:
		return in.startExitErr()
	}
}

// Interrupt interrupts the code the kernel is running: SIGINT to the
// kernel's process group in "signal" mode, interrupt_request on the control
// channel (waiting for its reply) in "message" mode. The interrupted
// Execute then finishes with the kernel's error (KeyboardInterrupt for
// ipykernel) and the kernel keeps its state.
func (k *Kernel) Interrupt(ctx context.Context) error {
	in, err := k.current(ctx)
	if err != nil {
		return fmt.Errorf("interrupting kernel: %w", err)
	}
	select {
	case <-in.done:
		return fmt.Errorf("interrupting kernel: %w", in.deadErr())
	default:
	}
	if k.spec.InterruptMode != "message" {
		if err := syscall.Kill(-in.pid, syscall.SIGINT); err != nil {
			return fmt.Errorf("interrupting kernel: %w", err)
		}
		return nil
	}
	req, err := in.request("interrupt_request", struct{}{}, in.control, false)
	if err != nil {
		return fmt.Errorf("interrupting kernel: %w", err)
	}
	defer in.forget(req)
	select {
	case <-req.reply:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("interrupting kernel: %w", ctx.Err())
	case <-in.done:
		return fmt.Errorf("interrupting kernel: %w", in.deadErr())
	}
}

// fifo is a lock granted in arrival order whose waiters can give up when
// their ctx ends; sync.Mutex promises neither.
type fifo struct {
	mu    sync.Mutex // guards held and queue
	held  bool
	queue []chan struct{}
}

func (f *fifo) lock(ctx context.Context) error {
	f.mu.Lock()
	if !f.held {
		f.held = true
		f.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	f.queue = append(f.queue, ch)
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		defer f.mu.Unlock()
		select {
		case <-ch: // granted as we gave up: pass it on
			f.unlockLocked()
		default:
			f.queue = slices.DeleteFunc(f.queue, func(c chan struct{}) bool { return c == ch })
		}
		return ctx.Err()
	}
}

func (f *fifo) unlock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unlockLocked()
}

// unlockLocked hands the lock to the oldest waiter, if any. f.mu must be held.
func (f *fifo) unlockLocked() {
	if len(f.queue) == 0 {
		f.held = false
		return
	}
	ch := f.queue[0]
	f.queue = f.queue[1:]
	close(ch)
}
