package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/reaper"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

const (
	// readChunk is the largest data event.
	readChunk = 32 * 1024
	// After the process exits, output is still read while it keeps coming at
	// least every drainIdle, for at most drainMax. A background job that
	// inherited stdout must not hold the end event back forever, but data
	// the process wrote just before exiting must not be lost.
	drainIdle = 50 * time.Millisecond
	drainMax  = 2 * time.Second
)

// proc is one started process, running or exited.
type proc struct {
	pid    int
	tag    *string
	config *pb.ProcessConfig

	// pty is the PTY master, nil for a pipe process; it carries both input
	// and output.
	pty *os.File
	// outputs are the parent ends the pumps read from.
	outputs []*os.File
	pumps   sync.WaitGroup

	inMu sync.Mutex
	// stdin is the write end of the child's stdin pipe; nil when stdin was
	// disabled at start or closed since. Guarded by inMu.
	stdin       *os.File
	stdinWanted bool

	out      *fanout
	exitCh   chan syscall.WaitStatus
	exitedAt atomic.Int64 // unix nanos, 0 while running
	killer   *time.Timer  // enforces the Start deadline; nil without one

	done chan struct{} // closed once end is set
	end  *pb.ProcessEvent
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *proc) info() *pb.ProcessInfo {
	return &pb.ProcessInfo{Config: p.config, Pid: uint32(p.pid), Tag: p.tag}
}

// onExit is the reaper callback; it must not block.
func (p *proc) onExit(ws syscall.WaitStatus) {
	p.exitCh <- ws
}

// pump copies one output stream into data events until EOF (or, for a PTY,
// EIO once every slave is closed), or until the drain after exit times out.
func (p *proc) pump(f *os.File, wrap func([]byte) *pb.ProcessEvent_DataEvent) {
	defer p.pumps.Done()
	buf := make([]byte, readChunk)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if p.out.hasSubscribers() {
				p.out.publish(dataEvent(wrap(bytes.Clone(buf[:n]))))
			}
			p.extendDrain(f)
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && pending(f) && p.drainLeft() {
				// The deadline passed before this goroutine got to read
				// (a busy machine), not for want of data: what the
				// process wrote before it exited is still in the pipe.
				p.extendDrain(f)
				continue
			}
			return
		}
	}
}

// pending reports whether f (a pipe or PTY master) has bytes to read
// (TIOCINQ is FIONREAD).
func pending(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	_ = rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return n > 0
}

// drainLeft reports whether the drain after exit may still go on.
func (p *proc) drainLeft() bool {
	limit, exited := p.drainLimit()
	return exited && time.Now().Before(limit)
}

func (p *proc) extendDrain(f *os.File) {
	if limit, exited := p.drainLimit(); exited {
		_ = f.SetReadDeadline(earlier(time.Now().Add(drainIdle), limit))
	}
}

// drainLimit is when the drain after exit ends; exited is false while the
// process runs.
func (p *proc) drainLimit() (limit time.Time, exited bool) {
	at := p.exitedAt.Load()
	if at == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, at).Add(drainMax), true
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// wait turns the exit into the end event: it drains the output, releases
// the file descriptors, publishes end and retires the record.
func (p *proc) wait(ctx context.Context, retire func(*proc)) {
	ws := <-p.exitCh
	now := time.Now()
	p.exitedAt.Store(now.UnixNano())
	for _, f := range p.outputs {
		_ = f.SetReadDeadline(now.Add(drainIdle))
	}
	p.pumps.Wait()
	for _, f := range p.outputs {
		if f == p.pty {
			_ = f.Close()
			continue
		}
		go discardUntilEOF(f)
	}
	if p.killer != nil {
		p.killer.Stop()
	}
	p.inMu.Lock()
	if p.stdin != nil {
		_ = p.stdin.Close()
		p.stdin = nil
	}
	p.inMu.Unlock()

	end := endEvent(ws)
	log.G(ctx).Debug("process ended", "status", end.GetEnd().GetStatus())
	p.end = end
	close(p.done)
	p.out.finish(end)
	retire(p)
}

// discardUntilEOF reads a pipe nobody listens to any more until its last
// writer closes it. A child the process left running (a daemon started
// with &, or what `xdg-open` hands a URL to) may still hold the pipe; had
// envd closed its end, that child's next write would kill it with SIGPIPE.
// A PTY is closed at once instead: its children get SIGHUP, as from a
// terminal that went away.
func discardUntilEOF(f *os.File) {
	_ = f.SetReadDeadline(time.Time{})
	_, _ = io.Copy(io.Discard, f)
	_ = f.Close()
}

// writeStdin writes to the stdin pipe (or the PTY for a PTY process).
func (p *proc) writeStdin(ctx context.Context, data []byte) error {
	if p.pty != nil {
		return p.writePTY(ctx, data)
	}
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.stdin == nil {
		if !p.stdinWanted {
			return errdefs.New(errdefs.ErrFailedPrecondition, "stdin is not enabled for this process; start it with stdin: true")
		}
		return errdefs.New(errdefs.ErrFailedPrecondition, "stdin of this process is closed")
	}
	return writeCtx(ctx, p.stdin, data)
}

func (p *proc) writePTY(ctx context.Context, data []byte) error {
	if p.pty == nil {
		return errdefs.New(errdefs.ErrInvalidArgument, "process has no PTY; send stdin input instead")
	}
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if !p.running() {
		return errdefs.New(errdefs.ErrNotFound, "process is not running")
	}
	return writeCtx(ctx, p.pty, data)
}

// closeStdin closes the stdin pipe; closing it twice is not an error.
func (p *proc) closeStdin() error {
	if p.pty != nil {
		return errdefs.New(errdefs.ErrInvalidArgument, "cannot close stdin of a PTY process; send Ctrl+D (0x04) instead")
	}
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.stdin == nil {
		return nil
	}
	err := p.stdin.Close()
	p.stdin = nil
	if err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	return nil
}

// writeCtx writes all of data, giving up when ctx ends: a process that never
// reads its input must not pin the RPC (and inMu) forever.
func writeCtx(ctx context.Context, f *os.File, data []byte) error {
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() {
			_ = f.SetWriteDeadline(time.Time{})
		}
	}()
	if _, err := f.Write(data); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
			return fmt.Errorf("writing input: %w", ctx.Err())
		}
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
			return errdefs.New(errdefs.ErrFailedPrecondition, "process input is closed")
		}
		return fmt.Errorf("writing input: %w", err)
	}
	return nil
}

func startEvent(pid int) *pb.ProcessEvent {
	return &pb.ProcessEvent{Event: &pb.ProcessEvent_Start{Start: &pb.ProcessEvent_StartEvent{Pid: uint32(pid)}}}
}

func dataEvent(d *pb.ProcessEvent_DataEvent) *pb.ProcessEvent {
	return &pb.ProcessEvent{Event: &pb.ProcessEvent_Data{Data: d}}
}

func keepaliveEvent() *pb.ProcessEvent {
	return &pb.ProcessEvent{Event: &pb.ProcessEvent_Keepalive{Keepalive: &pb.ProcessEvent_KeepAlive{}}}
}

func stdoutData(b []byte) *pb.ProcessEvent_DataEvent {
	return &pb.ProcessEvent_DataEvent{Output: &pb.ProcessEvent_DataEvent_Stdout{Stdout: b}}
}

func stderrData(b []byte) *pb.ProcessEvent_DataEvent {
	return &pb.ProcessEvent_DataEvent{Output: &pb.ProcessEvent_DataEvent_Stderr{Stderr: b}}
}

func ptyData(b []byte) *pb.ProcessEvent_DataEvent {
	return &pb.ProcessEvent_DataEvent{Output: &pb.ProcessEvent_DataEvent_Pty{Pty: b}}
}

// endEvent renders a wait status as E2B's envd does: a normal exit carries
// its code, a signal death exit code -1 and exited=false; error is set for
// anything but exit status 0.
func endEvent(ws syscall.WaitStatus) *pb.ProcessEvent {
	status := reaper.Describe(ws)
	end := &pb.ProcessEvent_EndEvent{Exited: ws.Exited(), Status: status, ExitCode: -1}
	if ws.Exited() {
		end.ExitCode = int32(ws.ExitStatus())
	}
	if end.ExitCode != 0 {
		end.Error = &status
	}
	return &pb.ProcessEvent{Event: &pb.ProcessEvent_End{End: end}}
}
