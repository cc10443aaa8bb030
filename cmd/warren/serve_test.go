package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseServe: flags that cannot work are an error before anything
// starts, not silently replaced by a default.
func TestParseServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret, short := filepath.Join(dir, "secret"), filepath.Join(dir, "short")
	if err := os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		wantErr string
		level   slog.Level
	}{
		{args: nil, level: slog.LevelInfo},
		{args: []string{"--log-level", "debug"}, level: slog.LevelDebug},
		{args: []string{"--log-level", "WARN"}, level: slog.LevelWarn},
		{args: []string{"--log-level", "loud"}, wantErr: "log-level"},
		{args: []string{"--runtime", "kata"}, wantErr: "--runtime"},
		{args: []string{"--metrics-retention", "-1s"}, wantErr: "--metrics-retention"},
		{args: []string{"--metrics-listen", "9090"}, wantErr: "--metrics-listen"},
		{args: []string{"--metrics-listen", "127.0.0.1:9090", "--metrics-sandbox-limit", "0"}, level: slog.LevelInfo},
		{args: []string{"--metrics-sandbox-limit", "-1"}, wantErr: "--metrics-sandbox-limit"},
		{args: []string{"--usage-retention", "-1h"}, wantErr: "--usage-retention"},
		// The node DaemonSet's arguments (deploy/kubernetes/node.yaml).
		{args: []string{"--role=node", "--node-name=n1", "--advertise-url=http://10.1.2.3:3000", "--store=postgres://w@db/w", "--cluster-secret-file=" + secret}, level: slog.LevelInfo},
		{args: []string{"--role=node", "--advertise-url=http://10.1.2.3:3000", "--store=postgres://w@db/w", "--cluster-secret-file=" + secret}, level: slog.LevelInfo}, // the hostname names it
		{args: []string{"--role=node", "--node-name=n1", "--advertise-url=http://10.1.2.3:3000", "--store=postgres://w@db/w"}, wantErr: "--cluster-secret-file: --role=node needs the cluster secret"},
		{args: []string{"--role=node", "--node-name=n1", "--advertise-url=http://10.1.2.3:3000", "--store=postgres://w@db/w", "--cluster-secret-file=" + short}, wantErr: "at least 32 characters"},
		{args: []string{"--role=node", "--node-name=n1", "--advertise-url=http://10.1.2.3:3000", "--store=postgres://w@db/w", "--cluster-secret-file=" + filepath.Join(dir, "none")}, wantErr: "--cluster-secret-file: open"},
		{args: []string{"--role=node", "--node-name=n1", "--advertise-url=http://10.1.2.3:3000", "--store="}, wantErr: "--role=node needs the cluster's shared store"},
		{args: []string{"--role=node", "--node-name=n1", "--store=postgres://w@db/w"}, wantErr: "--advertise-url"},
		// The API Deployment's arguments (deploy/kubernetes/api.yaml).
		{args: []string{"--role=api", "--store=postgres://w@db/w", "--cluster-secret-file=" + secret}, level: slog.LevelInfo},
		{args: []string{"--role=api", "--store=postgres://w@db/w"}, wantErr: "--role=api needs the cluster secret"},
		{args: []string{"--role=api"}, wantErr: "--role=api needs the cluster's shared store"},
		{args: []string{"--role=all", "--heartbeat-interval=0s"}, wantErr: "--heartbeat-interval"},
	} {
		cfg, err := parseServe(append([]string{"--envd", "/x/envd", "--interpreter", "/x/interpreter"}, tc.args...))
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err = %v, want one about %s", tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case cfg.LogLevel != tc.level:
			t.Errorf("%v: level %v, want %v", tc.args, cfg.LogLevel, tc.level)
		}
	}
}
