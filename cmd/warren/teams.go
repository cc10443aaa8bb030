package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/internal/store"
)

// teamsOptions are `warren teams`' flags.
type teamsOptions struct {
	db   storeFlags
	team store.Team // set's limits
}

// teamsCommand is `warren teams set|list`: per-team quotas over the
// server's --team-max-* defaults, on the server's database (see
// storeFlags; safe while the server runs: it reads them at each create).
func teamsCommand(o *teamsOptions) *cobra.Command {
	set := &cobra.Command{
		Use:   "set TEAM [--max-sandboxes N] [--max-memory MB] [--max-cpus N] [--max-builds N] [--max-volume-mb MB]",
		Short: "set a team's quotas (0: the server's default, -1: no limit)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			t := o.team
			t.ID = args[0]
			for _, v := range []int{t.MaxSandboxes, t.MaxMemoryMB, t.MaxCPUs, t.MaxBuilds, t.MaxVolumeMB} {
				if v < store.Unlimited {
					return fmt.Errorf("a limit is a number of at least -1 (no limit); 0 keeps the server's default")
				}
			}
			return o.db.with(cmd.Context(), func(st store.Store) error { return st.PutTeam(cmd.Context(), &t) })
		},
	}
	f := set.Flags()
	f.IntVar(&o.team.MaxSandboxes, "max-sandboxes", 0, "running sandboxes at once")
	f.IntVar(&o.team.MaxMemoryMB, "max-memory", 0, "total memory MB of running sandboxes")
	f.IntVar(&o.team.MaxCPUs, "max-cpus", 0, "total vCPUs of running sandboxes")
	f.IntVar(&o.team.MaxBuilds, "max-builds", 0, "template builds at once")
	f.IntVar(&o.team.MaxVolumeMB, "max-volume-mb", 0, "total size limit MB of its volumes")
	list := &cobra.Command{
		Use: "list", Short: "list the teams and their quotas", Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.db.with(cmd.Context(), func(st store.Store) error { return listTeams(cmd.Context(), st) })
		},
	}
	cmd := parentCommand("teams", "per-team quotas in a data directory", "server", set, list)
	o.db.register(cmd)
	return cmd
}

func listTeams(ctx context.Context, st store.Store) error {
	teams, err := st.ListTeams(ctx)
	if err != nil {
		return err
	}
	show := func(v int) string {
		switch v {
		case 0:
			return "default"
		case store.Unlimited:
			return "none"
		}
		return strconv.Itoa(v)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEAM\tSANDBOXES\tMEMORY MB\tCPUS\tBUILDS\tVOLUME MB")
	for _, t := range teams {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, show(t.MaxSandboxes), show(t.MaxMemoryMB), show(t.MaxCPUs),
			show(t.MaxBuilds), show(t.MaxVolumeMB))
	}
	return tw.Flush()
}
