package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// nodesCommand is `warren nodes`: a cluster's nodes as the store has
// them, and forgetting one that is gone (admin key).
func nodesCommand() *cobra.Command {
	var conn connFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "nodes",
		Short:   "list a cluster's nodes (admin key); `nodes rm NAME` forgets a dead one",
		GroupID: "client",
		Args:    cobra.NoArgs,
		RunE: withClient(&conn, func(ctx context.Context, c *warren.Client, _ []string) error {
			nodes, err := c.Nodes(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(nodes)
			}
			printNodes(nodes, time.Now())
			return nil
		}),
	}
	conn.register(cmd.PersistentFlags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the nodes as JSON")
	cmd.AddCommand(&cobra.Command{
		Use:   "rm NAME...",
		Short: "forget dead nodes and the sandboxes they still held (reported killed, node-lost)",
		Args:  cobra.MinimumNArgs(1),
		RunE: withClient(&conn, func(ctx context.Context, c *warren.Client, args []string) error {
			for _, name := range args {
				if err := c.DeleteNode(ctx, name); err != nil {
					return fmt.Errorf("forget node %s: %w", name, err)
				}
				fmt.Fprintln(os.Stderr, "forgot node", name)
			}
			return nil
		}),
	})
	return cmd
}

// printNodes writes the nodes as a table.
func printNodes(nodes []warren.Node, now time.Time) {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSTATE\tSANDBOXES\tCPUS\tMEMORY\tHEARTBEAT\tTEMPLATES\tADDRESS")
	for _, n := range nodes {
		state := "dead"
		if n.Alive {
			state = "alive"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d/%d\t%d/%d MiB\t%s ago\t%s\t%s\n", n.Name, state, n.RunningSandboxes,
			n.ReservedCPUs, n.CPUs, n.ReservedMemoryMB, n.MemoryMB, now.Sub(n.HeartbeatAt).Round(time.Second),
			strings.Join(n.Templates, ","), n.AdvertiseURL)
	}
	_ = w.Flush()
}
