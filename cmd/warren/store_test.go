package main

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/server"
	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
)

// TestStoreFlagPostgres manages a cluster's keys and teams through --store:
// the commands reach the Postgres database, and nothing in the data dir.
func TestStoreFlagPostgres(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	dir := t.TempDir()
	key := strings.TrimSpace(captureStdout(t, func() error {
		return runCLI("keys", "create", "--store", url, "--data-dir", dir, "--name", "cluster-ci")
	}))
	if !apikey.Valid(key) {
		t.Fatalf("created key %q is not e2b_ + 40 hex", key)
	}
	list := captureStdout(t, func() error { return runCLI("keys", "list", "--store", url) })
	if !strings.Contains(list, "cluster-ci") {
		t.Fatalf("keys list --store misses the key:\n%s", list)
	}
	captureStdout(t, func() error { return runCLI("teams", "set", "acme", "--store", url, "--max-sandboxes", "3") })
	teams := captureStdout(t, func() error { return runCLI("teams", "list", "--store", url) })
	if !strings.Contains(teams, "acme") {
		t.Fatalf("teams list --store misses the team:\n%s", teams)
	}
	st, err := server.OpenStore(t.Context(), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if keys, err := st.ListAPIKeys(t.Context()); err != nil || len(keys) != 0 {
		t.Fatalf("the data dir's SQLite has keys %v (%v): --store was ignored", keys, err)
	}
	if err := runCLI("keys", "list", "--store", "mysql://x"); err == nil {
		t.Fatal("keys list --store mysql://: want an error")
	}
}
