package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestPostgresStore runs `warren serve --store postgres://…` against a
// throwaway Postgres (Debian's server on a unix socket): sandboxes are
// created, listed, used and killed through the Go SDK with nothing kept in
// the data dir's SQLite, and a server restarted on the same database
// re-adopts the sandbox left running.
func TestPostgresStore(t *testing.T) {
	cfg := loadConfig(t)
	url := pgtest.Start(t).NewDatabase(t)
	o := serverOpts{index: 170, runtime: cfg.runtimes[0], dataDir: t.TempDir(), args: []string{"--store", url}}
	s := launchServer(t, cfg, o)
	ctx := t.Context()
	c := goClient(t, cfg, s)
	kept, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute, Metadata: map[string]string{"pg": "kept"}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	gone, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute, Metadata: map[string]string{"pg": "gone"}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	wantListed(ctx, t, c, kept.ID, gone.ID)
	if err := gone.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	wantListed(ctx, t, c, kept.ID)
	wantEcho(ctx, t, kept, "before")
	if _, err := os.Stat(filepath.Join(o.dataDir, "warren.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("warren.db in the data dir with --store postgres://: %v", err)
	}

	s.stopLeavingSandboxes(t)
	o.apiKey = s.apiKey // found in Postgres by the restarted server
	s2 := launchServer(t, cfg, o)
	c2 := goClient(t, cfg, s2)
	wantListed(ctx, t, c2, kept.ID)
	again, err := c2.Connect(ctx, kept.ID, time.Minute)
	if err != nil {
		t.Fatalf("Connect after restart: %v", err)
	}
	wantEcho(ctx, t, again, "after")
	if err := again.Kill(ctx); err != nil {
		t.Fatalf("Kill after restart: %v", err)
	}
	wantListed(ctx, t, c2)
}

func goClient(t testing.TB, cfg config, s *server) *warren.Client {
	t.Helper()
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantListed checks that the running sandboxes are exactly ids.
func wantListed(ctx context.Context, t *testing.T, c *warren.Client, ids ...string) {
	t.Helper()
	list, _, err := c.List(ctx, warren.ListOptions{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var got []string
	for _, in := range list {
		if in.State != "running" {
			t.Errorf("sandbox %s is %s, want running", in.ID, in.State)
		}
		got = append(got, in.ID)
	}
	slices.Sort(got)
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Fatalf("listed %v, want %v", got, ids)
	}
}

// wantEcho runs a command in sb and checks its output.
func wantEcho(ctx context.Context, t *testing.T, sb *warren.Sandbox, word string) {
	t.Helper()
	res, err := sb.Commands.Run(ctx, "echo "+word, warren.CommandOptions{})
	if err != nil || strings.TrimSpace(res.Stdout) != word {
		t.Fatalf("echo %s: %+v, %v", word, res, err)
	}
}
