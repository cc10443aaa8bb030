package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/warren-sandbox/warren/pkg/warren"
)

func sandboxShell(conn *connFlags) *cobra.Command {
	var user, cwd string
	cmd := &cobra.Command{
		Use:               "shell ID",
		Short:             "an interactive terminal in a sandbox (exit or ^D to leave)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSandboxes(conn),
		PreRunE: func(*cobra.Command, []string) error {
			if !term.IsTerminal(int(os.Stdin.Fd())) {
				return errors.New("shell needs a terminal; use `warren sandbox exec` to run a command")
			}
			return nil
		},
		RunE: withSandbox(conn, func(ctx context.Context, sb *warren.Sandbox, _ []string) error {
			in := int(os.Stdin.Fd())
			cols, rows, _ := term.GetSize(in)
			h, err := sb.Pty.Create(ctx, warren.PtyOptions{Cols: cols, Rows: rows, User: user, Cwd: cwd, Timeout: warren.NoTimeout,
				OnData: func(b []byte) { os.Stdout.Write(b) }})
			if err != nil {
				return err
			}
			old, err := term.MakeRaw(in)
			if err != nil {
				return fmt.Errorf("raw terminal: %w", err)
			}
			defer term.Restore(in, old)
			go followResize(ctx, sb, h.PID, in)
			go typeInto(ctx, sb, h.PID)
			_, err = h.Wait()
			var exit *warren.CommandExitError
			if errors.As(err, &exit) {
				return nil // the shell's last status is not warren's error
			}
			return err
		}),
	}
	cmd.Flags().StringVarP(&user, "user", "u", "", "log in as this user (root or user; default the sandbox's)")
	cmd.Flags().StringVarP(&cwd, "cwd", "w", "", "start in this directory")
	return cmd
}

// followResize tells the sandbox's terminal when this one changes size.
func followResize(ctx context.Context, sb *warren.Sandbox, pid, fd int) {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	for {
		select {
		case <-ctx.Done():
			return
		case <-winch:
			if cols, rows, err := term.GetSize(fd); err == nil {
				_ = sb.Pty.Resize(ctx, pid, cols, rows)
			}
		}
	}
}

// typeInto sends what is typed here to the sandbox's terminal.
func typeInto(ctx context.Context, sb *warren.Sandbox, pid int) {
	buf := make([]byte, 4096)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 && sb.Pty.SendInput(ctx, pid, buf[:n]) != nil {
			return
		}
		if err != nil {
			return
		}
	}
}
