package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
)

func sandboxInfo(conn *connFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:               "info ID",
		Short:             "show a sandbox",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSandboxes(conn),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client()
			if err != nil {
				return err
			}
			s, err := c.Info(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(s)
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "id\t%s\ntemplate\t%s %s\nstate\t%s\nstarted\t%s (%s ago)\nends\t%s (in %s)\ncpu\t%d\nmemory\t%d MiB\ndisk\t%d MiB\nmetadata\t%s\n",
				s.ID, s.TemplateID, s.Alias, s.State, s.StartedAt.Format(time.RFC3339), since(s.StartedAt),
				s.EndAt.Format(time.RFC3339), until(s.EndAt), s.CPUCount, s.MemoryMB, s.DiskSizeMB, pairs(s.Metadata))
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func sandboxKill(conn *connFlags) *cobra.Command {
	return &cobra.Command{
		Use:               "kill ID...",
		Short:             "end sandboxes and free all they hold",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeSandboxes(conn),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client()
			if err != nil {
				return err
			}
			for _, id := range args {
				if err := c.Kill(cmd.Context(), id); err != nil {
					return fmt.Errorf("kill %s: %w", id, err)
				}
				fmt.Fprintln(os.Stderr, "killed", id)
			}
			return nil
		},
	}
}

func sandboxPause(conn *connFlags) *cobra.Command {
	var diskOnly bool
	cmd := &cobra.Command{
		Use:               "pause ID",
		Short:             "freeze a sandbox (resume it with resume, or by connecting)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSandboxes(conn),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client()
			if err != nil {
				return err
			}
			if err := c.Pause(cmd.Context(), args[0], !diskOnly); err != nil {
				return err
			}
			fmt.Fprintln(os.Stderr, "paused", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&diskOnly, "disk-only", false, "keep only the disk: a resume boots afresh from it")
	return cmd
}

func sandboxResume(conn *connFlags) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:               "resume ID",
		Short:             "start a paused sandbox again",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSandboxes(conn),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client()
			if err != nil {
				return err
			}
			if _, err := c.Resume(cmd.Context(), args[0], timeout); err != nil {
				return err
			}
			fmt.Fprintln(os.Stderr, "resumed", args[0])
			return nil
		},
	}
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
		all, err := listAll(cmd, c, warren.ListOptions{})
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
