package warren

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
)

// CommandHandle follows a started process: its output, its end.
type CommandHandle struct {
	PID int

	c      *Commands
	cancel context.CancelFunc
	done   chan struct{}
	res    *CommandResult
	err    error
}

// outputs are where a process's output goes as it arrives.
type outputs struct {
	stdout, stderr, pty func([]byte)
	max                 int // bytes of each stream kept (0: all)
}

// event is what Start's and Connect's streams both carry.
type event interface{ GetEvent() *pb.ProcessEvent }

// follow waits for the stream's start event, then reads the rest in the
// background.
func follow[T any, P interface {
	*T
	event
}](c *Commands, stream *connect.ServerStreamForClient[T], cancel context.CancelFunc, out outputs) (*CommandHandle, error) {
	if !stream.Receive() {
		err := stream.Err()
		stream.Close()
		cancel()
		if err == nil {
			err = errors.New("warren: the process's stream ended before it started")
		}
		return nil, rpcError(err)
	}
	start := P(stream.Msg()).GetEvent().GetStart()
	if start == nil {
		stream.Close()
		cancel()
		return nil, fmt.Errorf("warren: expected the process's start event, got %v", P(stream.Msg()).GetEvent())
	}
	h := &CommandHandle{PID: int(start.GetPid()), c: c, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		defer cancel()
		defer stream.Close()
		h.res, h.err = collect[T, P](stream, out)
	}()
	return h, nil
}

// collect reads output and the end event until the stream closes.
func collect[T any, P interface {
	*T
	event
}](stream *connect.ServerStreamForClient[T], out outputs) (*CommandResult, error) {
	var stdout, stderr bytes.Buffer
	var end *pb.ProcessEvent_EndEvent
	for stream.Receive() {
		ev := P(stream.Msg()).GetEvent()
		if d := ev.GetData(); d != nil {
			deliver(d.GetStdout(), &stdout, out.stdout, out.max)
			deliver(d.GetStderr(), &stderr, out.stderr, out.max)
			deliver(d.GetPty(), nil, out.pty, 0)
		}
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
	res := &CommandResult{Stdout: stdout.String(), Stderr: stderr.String()}
	if err := stream.Err(); err != nil {
		return res, rpcError(err)
	}
	if end == nil {
		return res, errors.New("warren: the process's stream ended without its end event")
	}
	res.ExitCode, res.Error = int(end.GetExitCode()), end.GetError()
	if res.ExitCode != 0 {
		return res, &CommandExitError{Result: res}
	}
	return res, nil
}

func deliver(data []byte, buf *bytes.Buffer, fn func([]byte), limit int) {
	if len(data) == 0 {
		return
	}
	if buf != nil {
		keep := data
		if limit > 0 {
			keep = data[:min(len(data), max(0, limit-buf.Len()))]
		}
		buf.Write(keep)
	}
	if fn != nil {
		fn(data)
	}
}

// Wait returns when the process has ended (or the handle's context has),
// with what it wrote. A non-zero exit gives a *CommandExitError; a
// process killed at its timeout gives ErrTimeout.
func (h *CommandHandle) Wait() (*CommandResult, error) {
	<-h.done
	return h.res, h.err
}

// Done is closed once Wait would return.
func (h *CommandHandle) Done() <-chan struct{} { return h.done }

// Disconnect stops following the process, which goes on running.
func (h *CommandHandle) Disconnect() { h.cancel() }

// Kill kills the process; false when it had already ended.
func (h *CommandHandle) Kill(ctx context.Context) (bool, error) { return h.c.Kill(ctx, h.PID) }

// SendStdin writes to the process's stdin (started with Stdin set).
func (h *CommandHandle) SendStdin(ctx context.Context, data []byte) error {
	return h.c.SendStdin(ctx, h.PID, data)
}

// CloseStdin sends EOF to the process's stdin.
func (h *CommandHandle) CloseStdin(ctx context.Context) error { return h.c.CloseStdin(ctx, h.PID) }
