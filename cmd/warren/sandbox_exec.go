package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/warren-sandbox/warren/pkg/warren"
)

func sandboxExec(conn *connFlags) *cobra.Command {
	var o warren.CommandOptions
	cmd := &cobra.Command{
		Use:   "exec ID -- COMMAND [ARG...]",
		Short: "run a command in a sandbox, streaming its output; exits with its status",
		Long: "Runs the command with bash -l -c, as E2B's SDKs do. One argument after the id is a\n" +
			"shell command line (pipes and variables work); several arguments are an argv, each\n" +
			"quoted so it arrives as typed, as `e2b sandbox exec` does.\n" +
			"Its stdin is this one's when this one is not a terminal.",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: completeSandboxes(conn),
		RunE: withSandbox(conn, func(ctx context.Context, sb *warren.Sandbox, args []string) error {
			o.OnStdout = func(b []byte) { os.Stdout.Write(b) }
			o.OnStderr = func(b []byte) { os.Stderr.Write(b) }
			o.Stdin = !term.IsTerminal(int(os.Stdin.Fd()))
			argv := args[1:]
			if argv[0] == "--" {
				argv = argv[1:]
			}
			if len(argv) == 0 {
				return errors.New("no command after --")
			}
			h, err := sb.Commands.Start(ctx, commandLine(argv), o)
			if err != nil {
				return err
			}
			if o.Stdin {
				go pipeStdin(ctx, h)
			}
			_, err = h.Wait()
			var exit *warren.CommandExitError
			if errors.As(err, &exit) && exit.Result.ExitCode > 0 {
				return exitError{code: exit.Result.ExitCode}
			}
			return err
		}),
	}
	f := cmd.Flags()
	f.StringVarP(&o.User, "user", "u", "", "run as this user (root or user; default the sandbox's)")
	f.StringVarP(&o.Cwd, "cwd", "w", "", "working directory")
	f.StringToStringVarP(&o.Envs, "env", "e", nil, "environment variable K=V (repeatable)")
	f.DurationVar(&o.Timeout, "timeout", 0, "kill the command after this long (default: never; the sandbox's own timeout still holds)")
	f.SetInterspersed(false) // flags go before the id; the command's own flags are left alone
	cmd.PreRun = func(*cobra.Command, []string) {
		if o.Timeout == 0 {
			o.Timeout = warren.NoTimeout
		}
	}
	return cmd
}

// commandLine turns exec's arguments into the line bash -c runs: a single
// argument is already a command line; several are quoted one by one, so
// `-- sh -c 'echo $((6*7))'` reaches sh as three words.
func commandLine(argv []string) string {
	if len(argv) == 1 {
		return argv[0]
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// shellQuote leaves words of only safe characters bare and single-quotes
// the rest, closing and reopening the quotes around each ' inside.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, safeShellChars) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const safeShellChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-"

// pipeStdin forwards this process's stdin to the command, then EOF.
func pipeStdin(ctx context.Context, h *warren.CommandHandle) {
	buf := make([]byte, 32<<10)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			if h.SendStdin(ctx, buf[:n]) != nil {
				return
			}
		}
		if err == io.EOF {
			_ = h.CloseStdin(ctx)
			return
		}
		if err != nil {
			return
		}
	}
}
