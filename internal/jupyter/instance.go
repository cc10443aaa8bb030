package jupyter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// instance is one run of a kernel process with its connections. A Restart
// replaces the Kernel's instance; an instance never comes back to life.
type instance struct {
	log  *slog.Logger
	sess *session
	info *connInfo
	dir  string // private temp dir holding the connection file
	cmd  *exec.Cmd
	pid  int
	out  *tailBuffer // last bytes of the kernel's stdout/stderr
	// settle is KernelSpec.Settle: how long Execute lingers after idle.
	settle time.Duration
	outR   *os.File // read end of the kernel's output pipe
	// outDone closes when the copy of the kernel's output reaches EOF.
	outDone chan struct{}

	done    chan struct{} // closed once the process has been reaped
	exitErr error         // written before done closes

	shell, control, iopub *zsock
	kernelInfo            *Message // the kernel_info_reply seen at start

	// drained, when not nil, closes once an execute abandoned by its caller
	// has finished in the kernel. Guarded by Kernel.execQ.
	drained chan struct{}

	mu      sync.Mutex          // guards pending
	pending map[string]*request // by request msg_id

	sawStatus     chan struct{} // closed at the first iopub status: the subscription works
	sawStatusOnce sync.Once
	closing       chan struct{} // closed when stop begins: readers must not block
	stopOnce      sync.Once
	wg            sync.WaitGroup // reader and output goroutines
}

// request is a pending shell or control request awaiting its reply and,
// for executes, its iopub messages.
type request struct {
	reply chan *Message // buffered 1: the first reply wins
	iopub chan *Message // unbuffered so a slow consumer slows the reader; nil if unwanted
	gone  chan struct{} // closed when the requester stops listening
}

func newRequest(wantIOPub bool) *request {
	r := &request{reply: make(chan *Message, 1), gone: make(chan struct{})}
	if wantIOPub {
		r.iopub = make(chan *Message)
	}
	return r
}

// errAddrInUse marks a kernel that died because a port we picked was taken.
var errAddrInUse = errors.New("kernel port already in use")

// launch starts a kernel process and waits until it is ready.
func launch(ctx context.Context, spec KernelSpec, log *slog.Logger) (_ *instance, retErr error) {
	info, err := newConnInfo()
	if err != nil {
		return nil, err
	}
	// The key is used as its hex text, not decoded, exactly as jupyter_client does.
	in := &instance{
		log: log, sess: newSession([]byte(info.Key)), info: info, settle: spec.Settle,
		out: &tailBuffer{max: 8 << 10}, done: make(chan struct{}),
		pending: map[string]*request{}, sawStatus: make(chan struct{}), closing: make(chan struct{}),
	}
	dir, path, err := writeConnFile(info)
	if err != nil {
		return nil, err
	}
	in.dir = dir
	if err := in.startProcess(spec, path); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	defer func() {
		if retErr != nil {
			in.stop(context.WithoutCancel(ctx), 0)
			if strings.Contains(in.out.String(), "Address already in use") {
				retErr = fmt.Errorf("%w: %w", errAddrInUse, retErr)
			}
		}
	}()
	if err := in.connect(ctx); err != nil {
		return nil, err
	}
	if err := in.waitReady(ctx); err != nil {
		return nil, err
	}
	return in, nil
}

// startProcess execs the kernel in its own process group, so that an
// interrupt or kill reaches the processes its code spawned too.
func (in *instance) startProcess(spec KernelSpec, connFile string) error {
	argv := make([]string, len(spec.Argv))
	for i, a := range spec.Argv {
		argv[i] = strings.ReplaceAll(a, "{connection_file}", connFile)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = spec.Env, spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Our own pipe rather than an io.Writer: exec would otherwise make Wait
	// wait for every grandchild holding the pipe, delaying Done.
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating kernel output pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		return fmt.Errorf("starting kernel %q: %w", argv[0], err)
	}
	in.cmd, in.pid, in.outR = cmd, cmd.Process.Pid, r
	in.log = in.log.With("kernel_pid", in.pid)
	in.wg.Add(1)
	in.outDone = make(chan struct{})
	go func() {
		defer in.wg.Done()
		defer close(in.outDone)
		_, _ = io.Copy(in.out, r)
	}()
	go in.reap()
	return nil
}

// reap waits for the process and closes done. It is not in wg: stop waits
// for done itself.
func (in *instance) reap() {
	err := in.cmd.Wait()
	// Let the output copier read what the kernel wrote before it died, so
	// the error names the cause; a child still holding the pipe open must
	// not hold up the news of the death.
	select {
	case <-in.outDone:
	case <-time.After(time.Second):
	}
	in.exitErr = err
	in.log.Debug("kernel process exited", "err", err)
	close(in.done)
}

// startExitErr describes a kernel that died before it was ready, with
// what it printed.
func (in *instance) startExitErr() error {
	return fmt.Errorf("kernel exited during start (%v): %s", in.exitErr, in.out.String())
}

// deadErr describes why a dead kernel cannot serve a request.
func (in *instance) deadErr() error {
	msg := "kernel process exited"
	if in.exitErr != nil {
		msg += ": " + in.exitErr.Error()
	}
	return errdefs.New(errdefs.ErrUnavailable, msg)
}

// connect dials iopub, shell and control, retrying while the kernel binds.
// iopub goes first so its subscription has the most time to take effect.
func (in *instance) connect(ctx context.Context) error {
	chans := []struct {
		dst  **zsock
		port int
		typ  string
	}{{&in.iopub, in.info.IOPubPort, "SUB"}, {&in.shell, in.info.ShellPort, "DEALER"}, {&in.control, in.info.ControlPort, "DEALER"}}
	for _, c := range chans {
		z, err := in.dial(ctx, in.info.addr(c.port), c.typ)
		if err != nil {
			return err
		}
		*c.dst = z
	}
	if err := in.iopub.subscribeAll(); err != nil {
		return fmt.Errorf("subscribing to iopub: %w", err)
	}
	in.wg.Add(3)
	go in.readLoop(in.iopub, "iopub", in.deliverIOPub)
	go in.readLoop(in.shell, "shell", in.deliverReply)
	go in.readLoop(in.control, "control", in.deliverReply)
	return nil
}

func (in *instance) dial(ctx context.Context, addr, typ string) (*zsock, error) {
	delay := 10 * time.Millisecond
	for {
		z, err := dialZMTP(ctx, addr, typ)
		if err == nil {
			return z, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connecting to kernel at %s: %w (last error: %v)", addr, ctx.Err(), err)
		case <-in.done:
			return nil, in.startExitErr()
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// readLoop receives, verifies and dispatches messages until the connection
// closes.
func (in *instance) readLoop(z *zsock, channel string, deliver func(*Message)) {
	defer in.wg.Done()
	for {
		frames, dropped, err := z.recv()
		if err != nil {
			select {
			case <-in.closing:
			default:
				in.log.Debug("kernel channel closed", "channel", channel, "err", err)
			}
			return
		}
		m, err := in.sess.decode(frames, dropped)
		if dropped > 0 {
			in.log.Warn("kernel message over the size limit", "channel", channel, "dropped_bytes", dropped, "limit", MaxMessageSize)
		}
		if err != nil {
			in.log.Warn("dropping invalid kernel message", "channel", channel, "err", err)
			continue
		}
		deliver(m)
	}
}

func (in *instance) lookup(id string) *request {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.pending[id]
}

func (in *instance) deliverIOPub(m *Message) {
	if m.Type() == "status" {
		in.sawStatusOnce.Do(func() { close(in.sawStatus) })
	}
	p := in.lookup(m.ParentID())
	if p == nil || p.iopub == nil {
		in.log.Debug("ignoring iopub message", "type", m.Type(), "parent", m.ParentID())
		return
	}
	select {
	case p.iopub <- m:
	case <-p.gone:
	case <-in.closing:
	}
}

func (in *instance) deliverReply(m *Message) {
	p := in.lookup(m.ParentID())
	if p == nil {
		in.log.Debug("ignoring reply", "type", m.Type(), "parent", m.ParentID())
		return
	}
	select {
	case p.reply <- m:
	default: // a reply is already waiting: duplicates are dropped
	}
}

// stop ends the instance: a shutdown_request and up to grace for the kernel
// to exit by itself, then SIGKILL to the process group; then it closes the
// connections, waits for its goroutines and removes the connection file.
func (in *instance) stop(ctx context.Context, grace time.Duration) {
	in.stopOnce.Do(func() {
		if grace > 0 && in.control != nil {
			in.askShutdown(ctx, grace)
		}
		select {
		case <-in.done:
		default:
			in.killGroup()
		}
		<-in.done
		// Processes the kernel spawned may outlive it in its group: while any
		// does, the group id cannot be handed out again, so this reaches only them.
		in.killGroup()
		close(in.closing)
		for _, z := range []*zsock{in.iopub, in.shell, in.control} {
			if z != nil {
				_ = z.close()
			}
		}
		_ = in.outR.Close()
		in.wg.Wait()
		_ = os.RemoveAll(in.dir)
	})
}

// askShutdown sends shutdown_request and waits up to grace for the exit.
func (in *instance) askShutdown(ctx context.Context, grace time.Duration) {
	m, err := in.sess.newMessage("shutdown_request", map[string]bool{"restart": false})
	if err == nil {
		err = in.sendMsg(in.control, m)
	}
	if err != nil {
		in.log.Debug("sending shutdown_request", "err", err)
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-in.done:
	case <-t.C:
		in.log.Warn("kernel ignored shutdown_request; killing it", "grace", grace)
	case <-ctx.Done():
	}
}

// killGroup sends SIGKILL to the kernel's process group.
func (in *instance) killGroup() {
	if err := syscall.Kill(-in.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		in.log.Warn("killing kernel process group", "err", err)
	}
}

// sendMsg signs and sends m on z.
func (in *instance) sendMsg(z *zsock, m *Message) error {
	frames, err := in.sess.encode(m)
	if err != nil {
		return err
	}
	if err := z.send(frames); err != nil {
		return fmt.Errorf("sending %s: %w", m.Type(), err)
	}
	return nil
}
