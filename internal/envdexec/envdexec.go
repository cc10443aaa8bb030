// Package envdexec runs one command in a sandbox through envd's process
// service and streams its output. The manager runs templates' ready
// commands with it and the build runner the builder's RUN steps, so the
// client side of a command exists once.
package envdexec

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
)

// Command is one command to run.
type Command struct {
	Shell   []string // "" = /bin/sh -c
	Command string
	Env     map[string]string
	User    string // "" = root
	Workdir string // "" = the user's home, as envd decides
	// Token is the sandbox's envd access token ("" for an open envd).
	Token  string
	Output io.Writer // stdout and stderr, as they come; nil discards
}

// Run runs c through the envd at base ("http://ip:port") and returns its
// exit code. A command that ends without exiting (killed by a signal) is
// an error with code -1.
func Run(ctx context.Context, client *http.Client, base string, c Command) (int, error) {
	shell := c.Shell
	if len(shell) == 0 {
		shell = []string{"/bin/sh", "-c"}
	}
	cfg := &pb.ProcessConfig{Cmd: shell[0], Args: append(shell[1:len(shell):len(shell)], c.Command), Envs: c.Env}
	if c.Workdir != "" {
		cfg.Cwd = &c.Workdir
	}
	req := connect.NewRequest(&pb.StartRequest{Process: cfg})
	user := c.User
	if user == "" {
		user = "root"
	}
	req.Header().Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":")))
	if c.Token != "" {
		req.Header().Set("X-Access-Token", c.Token)
	}
	stream, err := processconnect.NewProcessClient(client, base).Start(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("starting the command: %w", err)
	}
	defer stream.Close()
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		if d := ev.GetData(); d != nil && c.Output != nil {
			_, _ = c.Output.Write(d.GetStdout())
			_, _ = c.Output.Write(d.GetStderr())
		}
		if end := ev.GetEnd(); end != nil {
			if !end.GetExited() {
				return -1, fmt.Errorf("the command did not exit normally (%s)", end.GetError())
			}
			return int(end.GetExitCode()), nil
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("running the command: %w", err)
	}
	return 0, errors.New("running the command: the stream ended without an exit status")
}
