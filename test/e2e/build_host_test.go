package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startBuild requests a build and starts it without waiting.
func (s *server) startBuild(t *testing.T, name string, req map[string]any) (templateID, buildID string) {
	t.Helper()
	var rb struct{ TemplateID, BuildID string }
	if err := json.Unmarshal(s.mustCall(t, "POST", "/v3/templates", fmt.Sprintf(`{"name":%q}`, name), 202), &rb); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(req)
	s.mustCall(t, "POST", "/v2/templates/"+rb.TemplateID+"/builds/"+rb.BuildID, string(body), 202)
	return rb.TemplateID, rb.BuildID
}

// waitBuild polls a build's status until done(status, log) holds.
func (s *server) waitBuild(t *testing.T, tid, bid string, done func(st map[string]any, log string) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var st map[string]any
		_ = json.Unmarshal(s.mustCall(t, "GET", "/templates/"+tid+"/builds/"+bid+"/status", "", 200), &st)
		b, _ := json.Marshal(st["logEntries"])
		if done(st, string(b)) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("build %s did not reach the wanted state", bid)
	return nil
}

// buildSandboxDirs lists the backend state dirs of build sandboxes (and
// any other) under the server's data dir.
func buildSandboxDirs(s *server) []string {
	all, _ := filepath.Glob(filepath.Join(s.dataDir, "sandboxes", "*", "*"))
	var dirs []string
	for _, d := range all {
		if !strings.HasPrefix(filepath.Base(d), ".") {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// TestBuildCancelAndRestart cancels a running build, and restarts the
// server under another: both end in the error state with a reason, and no
// build sandbox is left behind.
func TestBuildCancelAndRestart(t *testing.T) {
	cfg := loadConfig(t)
	o := serverOpts{index: 83, runtime: cfg.runtimes[0], dataDir: t.TempDir()}
	s := launchServer(t, cfg, o)
	slow := map[string]any{"fromTemplate": "base", "steps": []map[string]any{{"type": "RUN", "args": []string{"echo $((6*7)); sleep 120", "root"}}}}
	started := func(st map[string]any, log string) bool { return strings.Contains(log, `"message":"42"`) }
	ended := func(st map[string]any, _ string) bool { return st["status"] == "error" || st["status"] == "ready" }

	tid, bid := s.startBuild(t, "slow-cancel", slow)
	s.waitBuild(t, tid, bid, started)
	s.mustCall(t, "POST", "/templates/"+tid+"/builds/"+bid+"/cancel", "", 204)
	st := s.waitBuild(t, tid, bid, ended)
	if st["status"] != "error" || !strings.Contains(reason(st), "cancel") {
		t.Fatalf("cancelled build: status %v, reason %q", st["status"], reason(st))
	}
	if status, _ := s.call(t, "POST", "/templates/"+tid+"/builds/"+bid+"/cancel", ""); status != 409 {
		t.Fatalf("cancelling a finished build = %d, want 409", status)
	}
	if status, _ := s.call(t, "POST", "/templates/"+tid+"/builds/nope/status", ""); status != 404 && status != 405 {
		t.Fatalf("unknown build = %d", status)
	}

	tid, bid = s.startBuild(t, "slow-restart", slow)
	s.waitBuild(t, tid, bid, started)
	s.stop(t)
	s2 := launchServer(t, cfg, o)
	st = s2.waitBuild(t, tid, bid, ended)
	if st["status"] != "error" || (!strings.Contains(reason(st), "restart") && !strings.Contains(reason(st), "cancel")) {
		t.Fatalf("build interrupted by a restart: status %v, reason %q", st["status"], reason(st))
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(buildSandboxDirs(s2)) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if left := buildSandboxDirs(s2); len(left) > 0 {
		t.Fatalf("build sandboxes left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(o.dataDir, "layers")); err != nil {
		t.Fatal(err)
	}
}
