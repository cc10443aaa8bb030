package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
)

func sandboxLogs(conn *connFlags) *cobra.Command {
	var follow bool
	cmd := idCommand(conn, "logs ID", "print a sandbox's log: its processes' output and what warren did to it", cobra.ExactArgs(1),
		func(ctx context.Context, c *warren.Client, args []string) error {
			var cursor time.Time
			for {
				logs, err := c.Logs(ctx, args[0], warren.LogOptions{Cursor: cursor})
				if follow && errors.Is(err, warren.ErrNotFound) {
					return nil // the sandbox ended
				}
				if err != nil {
					return err
				}
				for _, l := range logs {
					fmt.Printf("%s %-5s %s%s\n", l.Time.Format("15:04:05.000"), l.Level, l.Message, fields(l.Fields))
					cursor = l.Time.Add(time.Millisecond)
				}
				if len(logs) > 0 {
					continue // more may be waiting beyond this page
				}
				if !follow {
					return nil
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(time.Second):
				}
			}
		})
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new lines until the sandbox ends")
	return cmd
}

func fields(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	return "  " + pairs(m)
}

func sandboxMetrics(conn *connFlags) *cobra.Command {
	var asJSON bool
	cmd := idCommand(conn, "metrics ID", "print a sandbox's CPU, memory and disk samples", cobra.ExactArgs(1),
		func(ctx context.Context, c *warren.Client, args []string) error {
			ms, err := c.Metrics(ctx, args[0], time.Time{}, time.Time{})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(ms)
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(w, "TIME\tCPUS\tCPU %\tMEMORY MiB\tOF MiB\tDISK MiB\tOF MiB\t")
			for _, m := range ms {
				fmt.Fprintf(w, "%s\t%d\t%.1f\t%.1f\t%.0f\t%.1f\t%.0f\t\n", m.Time.Local().Format("15:04:05"), m.CPUCount, m.CPUUsedPct,
					mib(m.MemUsed), mib(m.MemTotal), mib(m.DiskUsed), mib(m.DiskTotal))
			}
			return w.Flush()
		})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
