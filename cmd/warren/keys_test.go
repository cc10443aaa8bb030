package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/server"
	"github.com/warren-sandbox/warren/internal/store/sqlite"
)

// captureStdout runs f with os.Stdout redirected and returns what it wrote.
func captureStdout(t *testing.T, f func() error) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	ferr := f()
	os.Stdout = old
	w.Close()
	out, _ := io.ReadAll(r)
	if ferr != nil {
		t.Fatalf("command failed: %v", ferr)
	}
	return string(out)
}

// runCLI executes warren with args as main does.
func runCLI(args ...string) error {
	root := rootCommand()
	root.SetArgs(goStyleFlags(root, args))
	return root.Execute()
}

func TestKeysCommands(t *testing.T) {
	dir := t.TempDir()
	key := strings.TrimSpace(captureStdout(t, func() error {
		return runCLI("keys", "create", "--data-dir", dir, "--name", "ci")
	}))
	if !apikey.Valid(key) {
		t.Fatalf("created key %q is not e2b_ + 40 hex", key)
	}
	list := captureStdout(t, func() error { return runCLI("keys", "list", "--data-dir", dir) })
	if !strings.Contains(list, "ci") || strings.Contains(list, key) || !strings.Contains(list, "active") {
		t.Fatalf("list must show the key's name and mask, never the key:\n%s", list)
	}
	captureStdout(t, func() error { return runCLI("keys", "revoke", "--data-dir", dir, "ci") })

	st, err := sqlite.Open(context.Background(), filepath.Join(dir, server.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.GetAPIKeyByHash(context.Background(), apikey.Hash(key)); err == nil {
		t.Fatal("a revoked key must not authenticate")
	}
	for _, bad := range [][]string{{}, {"rotate", "--data-dir", dir}, {"revoke", "--data-dir", dir},
		{"create", "--data-dir", dir, "--team", "Not A Team"}, {"create", "--data-dir", dir, "--scopes", "root"}} {
		if err := runCLI(append([]string{"keys"}, bad...)...); err == nil {
			t.Errorf("keys %v: want an error", bad)
		}
	}
}

// TestKeysTeams: `keys create --team` puts the key in that team (made when
// first named), limited to the scopes given; list shows both. The key is
// the last line printed.
func TestKeysTeams(t *testing.T) {
	dir := t.TempDir()
	out := captureStdout(t, func() error {
		return runCLI("keys", "create", "--data-dir", dir, "--name", "ci", "--team", "acme", "--scopes", "sandboxes:read,sandboxes:write", "--expires", "24h")
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := lines[len(lines)-1]
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, server.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, err := st.GetAPIKeyByHash(context.Background(), apikey.Hash(key))
	if err != nil || k.TeamID != "acme" || len(k.Scopes) != 2 || k.ExpiresAt == nil || k.Admin {
		t.Fatalf("stored key = %+v, %v", k, err)
	}
	list := captureStdout(t, func() error { return runCLI("keys", "list", "--data-dir", dir) })
	if !strings.Contains(list, "acme") || !strings.Contains(list, "sandboxes:read,sandboxes:write") || !strings.Contains(list, "active until") {
		t.Fatalf("list must show the team, scopes and expiry:\n%s", list)
	}
}

// TestTeamsCommands: `warren teams set` stores a team's quota, `list`
// shows it, bad input is an error.
func TestTeamsCommands(t *testing.T) {
	dir := t.TempDir()
	captureStdout(t, func() error {
		return runCLI("teams", "set", "acme", "--data-dir", dir, "--max-sandboxes", "3", "--max-memory", "-1", "--max-volume-mb", "7168")
	})
	list := captureStdout(t, func() error { return runCLI("teams", "list", "--data-dir", dir) })
	if !strings.Contains(list, "acme") || !strings.Contains(list, "3") || !strings.Contains(list, "none") ||
		!strings.Contains(list, "VOLUME MB") || !strings.Contains(list, "7168") {
		t.Fatalf("list:\n%s", list)
	}
	for _, bad := range [][]string{{}, {"set", "--data-dir", dir}, {"set", "acme", "--data-dir", dir, "--max-cpus", "-2"},
		{"set", "acme", "--data-dir", dir, "--max-volume-mb", "-3"}, {"grow", "--data-dir", dir}} {
		if err := runCLI(append([]string{"teams"}, bad...)...); err == nil {
			t.Errorf("teams %v: want an error", bad)
		}
	}
}
