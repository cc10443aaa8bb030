package warren

import (
	"context"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
)

// Pty opens interactive terminals in a sandbox (E2B's sandbox.pty).
type Pty struct{ c *Commands }

// PtyOptions are a terminal's settings.
type PtyOptions struct {
	Cols, Rows int // default 80x24
	Cwd        string
	Envs       map[string]string
	User       string
	// Timeout bounds the terminal's life (0: DefaultCommandTimeout;
	// NoTimeout: none), as for commands.
	Timeout time.Duration
	// OnData gets the terminal's output as it arrives.
	OnData func([]byte)
}

// Create starts an interactive login bash on a new terminal. TERM, LANG
// and LC_ALL get the values E2B's SDKs give them unless Envs sets them.
func (p *Pty) Create(ctx context.Context, o PtyOptions) (*CommandHandle, error) {
	envs := map[string]string{"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
	for k, v := range o.Envs {
		envs[k] = v
	}
	cfg := &pb.ProcessConfig{Cmd: "/bin/bash", Args: []string{"-i", "-l"}, Envs: envs, Cwd: optional(o.Cwd)}
	return p.c.start(ctx, cfg, &pb.PTY{Size: ptySize(o.Cols, o.Rows)}, true, "", o.User, o.Timeout, outputs{pty: o.OnData})
}

// Connect follows a running terminal's output from now on.
func (p *Pty) Connect(ctx context.Context, pid int, onData func([]byte), timeout time.Duration) (*CommandHandle, error) {
	ctx, cancel := withTimeout(ctx, timeout)
	req := connect.NewRequest(&pb.ConnectRequest{Process: byPID(pid)})
	streamHeaders(req.Header(), "")
	stream, err := p.c.rpc.Connect(ctx, req)
	if err != nil {
		cancel()
		return nil, rpcError(err)
	}
	return follow(p.c, stream, cancel, outputs{pty: onData})
}

// SendInput types data into the terminal.
func (p *Pty) SendInput(ctx context.Context, pid int, data []byte) error {
	return p.c.input(ctx, pid, &pb.ProcessInput{Input: &pb.ProcessInput_Pty{Pty: data}})
}

// Resize changes the terminal's size.
func (p *Pty) Resize(ctx context.Context, pid, cols, rows int) error {
	_, err := p.c.rpc.Update(ctx, connect.NewRequest(&pb.UpdateRequest{Process: byPID(pid), Pty: &pb.PTY{Size: ptySize(cols, rows)}}))
	if err != nil {
		return rpcError(err)
	}
	return nil
}

// Kill kills the terminal's shell; false when it had already ended.
func (p *Pty) Kill(ctx context.Context, pid int) (bool, error) { return p.c.Kill(ctx, pid) }

func ptySize(cols, rows int) *pb.PTY_Size {
	if cols <= 0 {
		cols = 80
	}
	if rows <= 0 {
		rows = 24
	}
	return &pb.PTY_Size{Cols: uint32(cols), Rows: uint32(rows)}
}
