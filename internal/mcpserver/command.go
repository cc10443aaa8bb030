package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// maxCommandTimeout bounds a command's timeout argument.
const maxCommandTimeout = 24 * time.Hour

type runCommandInput struct {
	Command   string            `json:"command" jsonschema:"the command line, run by bash -l (pipes, redirections and && work)"`
	SandboxID string            `json:"sandboxId,omitempty" jsonschema:"the sandbox to use (from create_sandbox); omit it to use this session's own sandbox"`
	Cwd       string            `json:"cwd,omitempty" jsonschema:"the working directory (default: the user's home, /home/user)"`
	Envs      map[string]string `json:"envs,omitempty" jsonschema:"environment variables to set for the command"`
	Timeout   int               `json:"timeout,omitempty" jsonschema:"seconds after which the command is killed (default 60)"`
	User      string            `json:"user,omitempty" jsonschema:"run as user (the default) or root"`
}

type runCommandOutput struct {
	ExitCode int    `json:"exitCode" jsonschema:"the command's exit status (0: success)"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	Error    string `json:"error,omitempty" jsonschema:"how the command failed, e.g. exit status 2 or signal: killed"`
}

func (s *Server) addCommandTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "run_command",
		Title: "Run a shell command",
		Description: "Run a shell command in the sandbox (bash -l) and wait for it; returns its stdout, stderr " +
			"and exit code. A non-zero exit code is reported in the result, not as a tool error. " +
			"The command is killed after timeout seconds (default 60).",
	}, s.runCommand)
}

func (s *Server) runCommand(ctx context.Context, req *mcp.CallToolRequest, in runCommandInput) (*mcp.CallToolResult, runCommandOutput, error) {
	opts, err := commandOptions(in)
	if err != nil {
		return nil, runCommandOutput{}, err
	}
	sb, err := s.target(ctx, req, in.SandboxID)
	if err != nil {
		return nil, runCommandOutput{}, err
	}
	res, err := sb.Commands.Run(ctx, in.Command, opts)
	var exit *warren.CommandExitError
	switch {
	case errors.As(err, &exit):
		res = exit.Result
	case errors.Is(err, warren.ErrTimeout):
		return nil, runCommandOutput{}, fmt.Errorf("the command did not finish within %v and was killed: %w", opts.Timeout, err)
	case err != nil:
		return nil, runCommandOutput{}, fmt.Errorf("running the command in sandbox %s: %w", sb.ID, err)
	}
	out := runCommandOutput{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, Error: res.Error}
	return text(commandSummary(out)), out, nil
}

// commandOptions checks a run_command call's arguments.
func commandOptions(in runCommandInput) (warren.CommandOptions, error) {
	o := warren.CommandOptions{Envs: in.Envs, Cwd: in.Cwd, User: in.User, Timeout: warren.DefaultCommandTimeout}
	switch {
	case strings.TrimSpace(in.Command) == "":
		return o, errors.New("command is empty")
	case in.Timeout < 0 || time.Duration(in.Timeout)*time.Second > maxCommandTimeout:
		return o, fmt.Errorf("timeout %d is out of range: give seconds from 1 to %d", in.Timeout, int(maxCommandTimeout/time.Second))
	case in.User != "" && in.User != "user" && in.User != "root":
		return o, fmt.Errorf("user %q is not one of user, root", in.User)
	}
	if in.Timeout > 0 {
		o.Timeout = time.Duration(in.Timeout) * time.Second
	}
	return o, nil
}

// commandSummary is a finished command as text for a model to read.
func commandSummary(out runCommandOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit code: %d", out.ExitCode)
	if out.Error != "" && out.Error != fmt.Sprintf("exit status %d", out.ExitCode) {
		fmt.Fprintf(&b, " (%s)", out.Error)
	}
	for _, sec := range []struct{ name, body string }{{"stdout", out.Stdout}, {"stderr", out.Stderr}} {
		if sec.body != "" {
			fmt.Fprintf(&b, "\n[%s]\n%s", sec.name, strings.TrimRight(sec.body, "\n"))
		}
	}
	return b.String()
}
