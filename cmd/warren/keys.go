package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/warren-sandbox/warren/internal/apikey"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warren-sandbox/warren/internal/server"
	"github.com/warren-sandbox/warren/internal/store"
)

// runKeys implements `warren keys create|list|revoke`, working on the
// server's database directly: the data directory's SQLite (safe while the
// server runs: WAL) or, with --store, a cluster's Postgres.
func runKeys(args []string) error {
	if len(args) < 1 {
		return errors.New("usage: warren keys create|list|revoke [--data-dir DIR | --store URL] [--name NAME] [--team TEAM] [--scopes S,S] [--expires DURATION] [ID|NAME]")
	}
	fs := flag.NewFlagSet("keys "+args[0], flag.ContinueOnError)
	dataDir := fs.String("data-dir", server.DefaultDataDir, "data directory of the server")
	storeURL := fs.String("store", os.Getenv(server.StoreEnv), server.StoreFlagHelp)
	name := fs.String("name", "", "name of the new key (create)")
	team := fs.String("team", store.DefaultTeam, "team of the new key, created when first named (create)")
	scopes := fs.String("scopes", "", "comma-separated scopes the new key is limited to (create; default: all): "+strings.Join(apikey.Scopes, ", "))
	expires := fs.Duration("expires", 0, "lifetime of the new key, e.g. 720h (create; default: never expires)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx := context.Background()
	st, err := server.OpenStore(ctx, *storeURL, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	switch args[0] {
	case "create":
		var sc []string
		if *scopes != "" {
			sc = strings.Split(*scopes, ",")
		}
		key, err := server.CreateKey(ctx, st, apikey.Spec{Name: *name, Team: *team, Scopes: sc, TTL: *expires})
		if err != nil {
			return err
		}
		fmt.Println(key)
		return nil
	case "list":
		return listKeys(ctx, st)
	case "revoke":
		if fs.NArg() != 1 {
			return errors.New("usage: warren keys revoke ID|NAME")
		}
		return st.RevokeAPIKey(ctx, fs.Arg(0))
	}
	return fmt.Errorf("unknown keys command %q", args[0])
}

func listKeys(ctx context.Context, st store.Store) error {
	keys, err := st.ListAPIKeys(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTEAM\tKEY\tSCOPES\tCREATED\tSTATUS")
	now := time.Now()
	for _, k := range keys {
		status := "active"
		switch {
		case k.RevokedAt != nil:
			status = "revoked " + k.RevokedAt.Format(time.RFC3339)
		case apikey.Expired(k, now):
			status = "expired " + k.ExpiresAt.Format(time.RFC3339)
		case k.ExpiresAt != nil:
			status = "active until " + k.ExpiresAt.Format(time.RFC3339)
		}
		if k.Admin {
			status += ", admin"
		}
		scopes := "all"
		if len(k.Scopes) > 0 {
			scopes = strings.Join(k.Scopes, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, store.TeamOf(k.TeamID), k.Mask, scopes, k.CreatedAt.Format(time.RFC3339), status)
	}
	return tw.Flush()
}
