package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/warren-sandbox/warren/internal/server"
	"github.com/warren-sandbox/warren/internal/store"
)

// runTeams implements `warren teams set|list`: per-team quotas over the
// server's --team-max-* defaults, on the server's database (the data
// directory's, or --store's; safe while the server runs: it reads them at
// each create).
func runTeams(args []string) error {
	const usage = "usage: warren teams set TEAM [--max-sandboxes N] [--max-memory MB] [--max-cpus N] [--max-builds N] | warren teams list  [--data-dir DIR | --store URL]  (0: the server's default, -1: no limit)"
	if len(args) < 1 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("teams "+args[0], flag.ContinueOnError)
	dataDir := fs.String("data-dir", server.DefaultDataDir, "data directory of the server")
	storeURL := fs.String("store", os.Getenv(server.StoreEnv), server.StoreFlagHelp)
	var t store.Team
	fs.IntVar(&t.MaxSandboxes, "max-sandboxes", 0, "running sandboxes at once")
	fs.IntVar(&t.MaxMemoryMB, "max-memory", 0, "total memory MB of running sandboxes")
	fs.IntVar(&t.MaxCPUs, "max-cpus", 0, "total vCPUs of running sandboxes")
	fs.IntVar(&t.MaxBuilds, "max-builds", 0, "template builds at once")
	rest := args[1:]
	if args[0] == "set" && len(rest) > 0 && rest[0] != "" && rest[0][0] != '-' {
		t.ID, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	ctx := context.Background()
	st, err := server.OpenStore(ctx, *storeURL, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	switch args[0] {
	case "set":
		if t.ID == "" {
			return errors.New(usage)
		}
		for _, v := range []int{t.MaxSandboxes, t.MaxMemoryMB, t.MaxCPUs, t.MaxBuilds} {
			if v < store.Unlimited {
				return fmt.Errorf("a limit is a number of at least -1 (no limit); 0 keeps the server's default")
			}
		}
		return st.PutTeam(ctx, &t)
	case "list":
		return listTeams(ctx, st)
	}
	return fmt.Errorf("unknown teams command %q\n%s", args[0], usage)
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
	fmt.Fprintln(tw, "TEAM\tSANDBOXES\tMEMORY MB\tCPUS\tBUILDS")
	for _, t := range teams {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, show(t.MaxSandboxes), show(t.MaxMemoryMB), show(t.MaxCPUs), show(t.MaxBuilds))
	}
	return tw.Flush()
}
