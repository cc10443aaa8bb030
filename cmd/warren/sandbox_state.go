package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// clientRun is a client command's body, given the server's client.
type clientRun func(ctx context.Context, c *warren.Client, args []string) error

// withClient resolves the server (flags, E2B_*, login) before run.
func withClient(conn *connFlags, run clientRun) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := conn.client()
		if err != nil {
			return err
		}
		return run(cmd.Context(), c, args)
	}
}

// withSandbox connects to the sandbox args[0] names (resuming it if it is
// paused) before run.
func withSandbox(conn *connFlags, run func(ctx context.Context, sb *warren.Sandbox, args []string) error) func(*cobra.Command, []string) error {
	return withClient(conn, func(ctx context.Context, c *warren.Client, args []string) error {
		sb, err := c.Connect(ctx, args[0], 0)
		if err != nil {
			return err
		}
		return run(ctx, sb, args)
	})
}

// idCommand is a command on sandbox ids, which the shell completes.
func idCommand(conn *connFlags, use, short string, args cobra.PositionalArgs, run clientRun) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: args, ValidArgsFunction: completeSandboxes(conn), RunE: withClient(conn, run)}
}

func sandboxInfo(conn *connFlags) *cobra.Command {
	var asJSON bool
	cmd := idCommand(conn, "info ID", "show a sandbox", cobra.ExactArgs(1), func(ctx context.Context, c *warren.Client, args []string) error {
		s, err := c.Info(ctx, args[0])
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(s)
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "id\t%s\ntemplate\t%s %s\nstate\t%s\nstarted\t%s (%s ago)\nends\t%s (in %s)\ncpu\t%d\nmemory\t%d MiB\ndisk\t%d MiB\nmetadata\t%s\nvolumes\t%s\n",
			s.ID, s.TemplateID, s.Alias, s.State, s.StartedAt.Format(time.RFC3339), since(s.StartedAt),
			s.EndAt.Format(time.RFC3339), until(s.EndAt), s.CPUCount, s.MemoryMB, s.DiskSizeMB, pairs(s.Metadata), mountList(s.VolumeMounts))
		return w.Flush()
	})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func sandboxKill(conn *connFlags) *cobra.Command {
	return idCommand(conn, "kill ID...", "end sandboxes and free all they hold", cobra.MinimumNArgs(1), func(ctx context.Context, c *warren.Client, args []string) error {
		for _, id := range args {
			if err := c.Kill(ctx, id); err != nil {
				return fmt.Errorf("kill %s: %w", id, err)
			}
			fmt.Fprintln(os.Stderr, "killed", id)
		}
		return nil
	})
}

func sandboxPause(conn *connFlags) *cobra.Command {
	var diskOnly bool
	cmd := idCommand(conn, "pause ID", "freeze a sandbox (resume it with resume, or by connecting)", cobra.ExactArgs(1), func(ctx context.Context, c *warren.Client, args []string) error {
		if err := c.Pause(ctx, args[0], !diskOnly); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "paused", args[0])
		return nil
	})
	cmd.Flags().BoolVar(&diskOnly, "disk-only", false, "keep only the disk: a resume boots afresh from it")
	return cmd
}

func sandboxResume(conn *connFlags) *cobra.Command {
	var timeout time.Duration
	cmd := idCommand(conn, "resume ID", "start a paused sandbox again", cobra.ExactArgs(1), func(ctx context.Context, c *warren.Client, args []string) error {
		if _, err := c.Resume(ctx, args[0], timeout); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "resumed", args[0])
		return nil
	})
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "how long it then lives (default: the server's)")
	return cmd
}

// completeSandboxes offers the ids of the server's sandboxes to the
// shell's completion.
func completeSandboxes(conn *connFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		c, err := conn.client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		all, err := listAll(cmd.Context(), c, warren.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var ids []string
		for _, s := range all {
			ids = append(ids, s.ID+"\t"+s.State+" "+s.TemplateID)
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}
