package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
)

// TestSandboxDeath kills a sandbox's init from the host, as the host's OOM
// killer does to a gVisor Sentry: the command streaming through warren must
// end with an error at once (not when its timeout runs out), the sandbox
// must be gone from the API, and nothing of it may stay on the host.
func TestSandboxDeath(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			s := launchServer(t, cfg, serverOpts{index: 90 + i, runtime: rt})
			c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{}}
			ctx := t.Context()
			sb, err := c.Create(ctx, "base", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sb.Run(ctx, "user", "true"); err != nil {
				t.Fatalf("control command: %v", err)
			}
			ran := make(chan error, 1)
			go func() {
				_, err := sb.Run(ctx, "user", "sleep 50")
				ran <- err
			}()
			time.Sleep(500 * time.Millisecond) // the stream is open
			data, err := os.ReadFile(filepath.Join(s.dataDir, "sandboxes", rt, sb.ID, "init.pid"))
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil || pid <= 1 {
				t.Fatalf("init pid %q", data)
			}
			killed := time.Now()
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ran:
				if err == nil {
					t.Fatal("the command succeeded in a sandbox whose init was killed")
				}
				t.Logf("the command ended %v after the kill: %v", time.Since(killed).Round(time.Millisecond), err)
			case <-time.After(20 * time.Second):
				t.Fatal("the command was still running 20s after its sandbox died")
			}
			waitGone(t, s, sb.ID)
			// Destroy runs after the API forgets the sandbox; on runsc it
			// waits for the host's slow reaping.
			dir := filepath.Join(s.dataDir, "sandboxes", rt, sb.ID)
			for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				if _, err := os.Lstat(dir); os.IsNotExist(err) {
					break
				}
			}
			s.checkHostFree(t, rt, fmt.Sprintf("we2e%d", 90+i), []string{sb.ID})
			if !strings.Contains(s.logTail(20), "sandbox died") {
				t.Errorf("the server did not log the death:\n%s", s.logTail(20))
			}
		})
	}
}

// waitGone waits until GET /sandboxes/{id} answers 404.
func waitGone(t *testing.T, s *server, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := s.call(t, http.MethodGet, "/sandboxes/"+id, "")
		if code == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a dead sandbox is still listed: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
