package warren

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
)

// DefaultCommandTimeout bounds a command's life when its options do not,
// as E2B's SDKs do: envd kills the process when the deadline passes.
const DefaultCommandTimeout = 60 * time.Second

// NoTimeout, as a command's or PTY's Timeout, lets it run until it ends.
const NoTimeout time.Duration = -1

// Commands starts and manages processes in a sandbox (E2B's
// sandbox.commands).
type Commands struct {
	sb  *Sandbox
	rpc processconnect.ProcessClient
}

// CommandOptions are a command's settings; the zero value runs it as the
// sandbox's default user, in its default directory, for at most a minute.
type CommandOptions struct {
	Envs map[string]string
	Cwd  string
	// User is "root" or "user" ("": the sandbox's default, "user").
	User string
	// Stdin keeps the command's stdin open for SendStdin; otherwise it
	// reads EOF.
	Stdin bool
	// Timeout bounds the process's life (0: DefaultCommandTimeout;
	// NoTimeout: none). A command that outlives it is killed and its Wait
	// returns ErrTimeout.
	Timeout time.Duration
	// Tag names the process, for List.
	Tag string
	// OnStdout and OnStderr get output as it arrives, in chunks that may
	// split lines and UTF-8 sequences.
	OnStdout, OnStderr func([]byte)
	// MaxOutput caps the bytes of each stream that the result keeps (0:
	// all), for commands that may write without end; the callbacks still
	// get everything.
	MaxOutput int
}

// CommandResult is a finished command.
type CommandResult struct {
	ExitCode       int
	Stdout, Stderr string
	// Error is envd's account of a failure, e.g. "exit status 2" or
	// "signal: killed".
	Error string
}

// CommandExitError is the error of a command that ended with a non-zero
// status; Result has its output.
type CommandExitError struct{ Result *CommandResult }

func (e *CommandExitError) Error() string {
	if e.Result.Error != "" {
		return "warren: command failed: " + e.Result.Error
	}
	return fmt.Sprintf("warren: command exited with status %d", e.Result.ExitCode)
}

// Run runs cmd with bash (as a login shell, like E2B's SDKs) and waits for
// it. A non-zero exit gives the result and a *CommandExitError.
func (c *Commands) Run(ctx context.Context, cmd string, o CommandOptions) (*CommandResult, error) {
	h, err := c.Start(ctx, cmd, o)
	if err != nil {
		return nil, err
	}
	return h.Wait()
}

// Start runs cmd with bash in the background and returns once the process
// has started. ctx bounds the handle: when it ends, the handle stops
// following the process, which goes on running (see Connect).
func (c *Commands) Start(ctx context.Context, cmd string, o CommandOptions) (*CommandHandle, error) {
	return c.Exec(ctx, "/bin/bash", []string{"-l", "-c", cmd}, o)
}

// Exec starts a program with its arguments, without a shell (for images
// that have no bash, or arguments that must not be parsed), as Start
// does.
func (c *Commands) Exec(ctx context.Context, name string, args []string, o CommandOptions) (*CommandHandle, error) {
	return c.start(ctx, &pb.ProcessConfig{Cmd: name, Args: args, Envs: o.Envs, Cwd: optional(o.Cwd)},
		nil, o.Stdin, o.Tag, o.User, o.Timeout, outputs{stdout: o.OnStdout, stderr: o.OnStderr, max: o.MaxOutput})
}

func (c *Commands) start(ctx context.Context, cfg *pb.ProcessConfig, pty *pb.PTY, stdin bool, tag, user string, timeout time.Duration, out outputs) (*CommandHandle, error) {
	ctx, cancel := withTimeout(ctx, timeout)
	req := connect.NewRequest(&pb.StartRequest{Process: cfg, Pty: pty, Stdin: &stdin, Tag: optional(tag)})
	streamHeaders(req.Header(), user)
	stream, err := c.rpc.Start(ctx, req)
	if err != nil {
		cancel()
		return nil, rpcError(err)
	}
	return follow(c, stream, cancel, out)
}

// Connect follows a running process's output from now on, e.g. one that a
// Start whose context has ended left running.
func (c *Commands) Connect(ctx context.Context, pid int, o CommandOptions) (*CommandHandle, error) {
	ctx, cancel := withTimeout(ctx, o.Timeout)
	req := connect.NewRequest(&pb.ConnectRequest{Process: byPID(pid)})
	streamHeaders(req.Header(), o.User)
	stream, err := c.rpc.Connect(ctx, req)
	if err != nil {
		cancel()
		return nil, rpcError(err)
	}
	return follow(c, stream, cancel, outputs{stdout: o.OnStdout, stderr: o.OnStderr, max: o.MaxOutput})
}

// ProcessInfo is a running process.
type ProcessInfo struct {
	PID  int
	Tag  string
	Cmd  string
	Args []string
	Envs map[string]string
	Cwd  string
}

// List returns the sandbox's running processes that envd started.
func (c *Commands) List(ctx context.Context) ([]ProcessInfo, error) {
	resp, err := c.rpc.List(ctx, connect.NewRequest(&pb.ListRequest{}))
	if err != nil {
		return nil, rpcError(err)
	}
	var out []ProcessInfo
	for _, p := range resp.Msg.GetProcesses() {
		cfg := p.GetConfig()
		out = append(out, ProcessInfo{PID: int(p.GetPid()), Tag: p.GetTag(), Cmd: cfg.GetCmd(),
			Args: cfg.GetArgs(), Envs: cfg.GetEnvs(), Cwd: cfg.GetCwd()})
	}
	return out, nil
}

// Kill sends SIGKILL to a process; false when there is no such process.
func (c *Commands) Kill(ctx context.Context, pid int) (bool, error) {
	return c.signal(ctx, pid, pb.Signal_SIGNAL_SIGKILL)
}

// Signal is a signal SendSignal delivers.
type Signal int

// The signals envd delivers.
const (
	SIGTERM Signal = iota + 1
	SIGKILL
)

// SendSignal sends sig to a process; false when there is no such process.
func (c *Commands) SendSignal(ctx context.Context, pid int, sig Signal) (bool, error) {
	switch sig {
	case SIGTERM:
		return c.signal(ctx, pid, pb.Signal_SIGNAL_SIGTERM)
	case SIGKILL:
		return c.signal(ctx, pid, pb.Signal_SIGNAL_SIGKILL)
	}
	return false, fmt.Errorf("signal %d: %w: not SIGTERM or SIGKILL", sig, ErrInvalid)
}

func (c *Commands) signal(ctx context.Context, pid int, sig pb.Signal) (bool, error) {
	_, err := c.rpc.SendSignal(ctx, connect.NewRequest(&pb.SendSignalRequest{Process: byPID(pid), Signal: sig}))
	if connect.CodeOf(err) == connect.CodeNotFound {
		return false, nil
	}
	if err != nil {
		return false, rpcError(err)
	}
	return true, nil
}

// SendStdin writes data to a process's stdin (started with Stdin set).
func (c *Commands) SendStdin(ctx context.Context, pid int, data []byte) error {
	return c.input(ctx, pid, &pb.ProcessInput{Input: &pb.ProcessInput_Stdin{Stdin: data}})
}

// CloseStdin sends EOF to a process's stdin.
func (c *Commands) CloseStdin(ctx context.Context, pid int) error {
	_, err := c.rpc.CloseStdin(ctx, connect.NewRequest(&pb.CloseStdinRequest{Process: byPID(pid)}))
	if err != nil {
		return rpcError(err)
	}
	return nil
}

func (c *Commands) input(ctx context.Context, pid int, in *pb.ProcessInput) error {
	_, err := c.rpc.SendInput(ctx, connect.NewRequest(&pb.SendInputRequest{Process: byPID(pid), Input: in}))
	if err != nil {
		return rpcError(err)
	}
	return nil
}

func byPID(pid int) *pb.ProcessSelector {
	return &pb.ProcessSelector{Selector: &pb.ProcessSelector_Pid{Pid: uint32(pid)}}
}

// withTimeout applies a command's timeout (0: the default; NoTimeout:
// none) to ctx. Connect sends it as Connect-Timeout-Ms, which envd
// enforces by killing the process.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	switch {
	case d == 0:
		return context.WithTimeout(ctx, DefaultCommandTimeout)
	case d < 0:
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// streamHeaders are what E2B's SDKs send on a streaming call: the user,
// and a keepalive every 50 s so that idle streams survive proxies.
func streamHeaders(h http.Header, user string) {
	h.Set("Keepalive-Ping-Interval", "50")
	setUser(h, user)
}

func setUser(h http.Header, user string) {
	if user != "" {
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":")))
	}
}
