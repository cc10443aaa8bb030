package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/server"
	"github.com/warren-sandbox/warren/internal/store"
)

// keysOptions are `warren keys`' flags.
type keysOptions struct {
	db                 storeFlags
	name, team, scopes string
	expires            time.Duration
}

// keysCommand is `warren keys create|list|revoke`, working on the server's
// database directly (see storeFlags).
func keysCommand(o *keysOptions) *cobra.Command {
	create := &cobra.Command{
		Use:   "create [--name NAME] [--team TEAM] [--scopes S,S] [--expires DURATION]",
		Short: "create an API key and print it (the last line printed)",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.create(cmd.Context()) },
	}
	f := create.Flags()
	f.StringVar(&o.name, "name", "", "name of the new key")
	f.StringVar(&o.team, "team", store.DefaultTeam, "team of the new key, created when first named")
	f.StringVar(&o.scopes, "scopes", "", "comma-separated scopes the new key is limited to (default: all): "+strings.Join(apikey.Scopes, ", "))
	f.DurationVar(&o.expires, "expires", 0, "lifetime of the new key, e.g. 720h (default: never expires)")
	_ = create.RegisterFlagCompletionFunc("scopes", cobra.FixedCompletions(apikey.Scopes, cobra.ShellCompDirectiveNoFileComp))
	list := &cobra.Command{
		Use: "list", Short: "list the keys (never the keys themselves)", Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.db.with(cmd.Context(), func(st store.Store) error { return listKeys(cmd.Context(), st) })
		},
	}
	revoke := &cobra.Command{
		Use: "revoke ID|NAME", Short: "revoke a key", Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.db.with(cmd.Context(), func(st store.Store) error { return st.RevokeAPIKey(cmd.Context(), args[0]) })
		},
	}
	cmd := parentCommand("keys", "manage API keys in a data directory", "server", create, list, revoke)
	o.db.register(cmd)
	return cmd
}

func (o *keysOptions) create(ctx context.Context) error {
	var sc []string
	if o.scopes != "" {
		sc = strings.Split(o.scopes, ",")
	}
	return o.db.with(ctx, func(st store.Store) error {
		key, err := server.CreateKey(ctx, st, apikey.Spec{Name: o.name, Team: o.team, Scopes: sc, TTL: o.expires})
		if err != nil {
			return err
		}
		fmt.Println(key)
		return nil
	})
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
