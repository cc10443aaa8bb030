package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSnapshotRace takes snapshots and forks of two sandboxes while other
// sandboxes are created and killed around them (each kill starts the
// snapshot collector). Every snapshot and fork must succeed, and both
// sources must keep their files and keep running.
func TestSnapshotRace(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			o := serverOpts{index: 66 + i, runtime: rt, dataDir: t.TempDir()}
			s := launchServer(t, cfg, o)
			sources := []string{
				s.createSandbox(t, `{"templateID":"base","timeout":600}`),
				s.createSandbox(t, `{"templateID":"base","timeout":600}`),
			}
			for _, id := range sources {
				s.uploadFile(t, id, "/home/user/kept.txt", "kept by "+id)
			}
			var made sync.Map // every sandbox the test made, to free at the end
			var done atomic.Bool
			var churn sync.WaitGroup
			churn.Add(1)
			go func() {
				defer churn.Done()
				for n := 0; !done.Load() || n < 2; n++ {
					status, body, err := s.try("POST", "/v2/sandboxes", `{"templateID":"base","timeout":120}`)
					var sb struct{ SandboxID string }
					if err != nil || status != http.StatusCreated || json.Unmarshal(body, &sb) != nil {
						t.Errorf("churn create: %d %s %v", status, body, err)
						return
					}
					if status, body, err := s.try("DELETE", "/sandboxes/"+sb.SandboxID, ""); err != nil || status != http.StatusNoContent {
						t.Errorf("churn kill: %d %s %v", status, body, err)
						return
					}
				}
			}()
			var work sync.WaitGroup
			for _, src := range sources {
				work.Add(1)
				go func() {
					defer work.Done()
					for round := 0; round < 3; round++ {
						if status, body, err := s.try("POST", "/sandboxes/"+src+"/snapshots", `{}`); err != nil || status != http.StatusCreated {
							t.Errorf("snapshot of %s, round %d: %d %s %v", src, round, status, body, err)
							return
						}
						status, body, err := s.try("POST", "/sandboxes/"+src+"/fork", `{"count":1}`)
						var forks []struct{ Sandbox struct{ SandboxID string } }
						if err != nil || status != http.StatusCreated || json.Unmarshal(body, &forks) != nil || len(forks) != 1 || forks[0].Sandbox.SandboxID == "" {
							t.Errorf("fork of %s, round %d: %d %s %v", src, round, status, body, err)
							return
						}
						made.Store(forks[0].Sandbox.SandboxID, true)
					}
				}()
			}
			work.Wait()
			done.Store(true)
			churn.Wait()
			ids := append([]string(nil), sources...)
			made.Range(func(k, _ any) bool { ids = append(ids, k.(string)); return true })
			for _, id := range sources {
				if got := s.downloadFile(t, id, "/home/user/kept.txt"); got != "kept by "+id {
					t.Errorf("source %s's file = %q", id, got)
				}
			}
			for _, id := range ids {
				s.mustCall(t, "DELETE", "/sandboxes/"+id, "", http.StatusNoContent)
			}
			s.checkHostFree(t, rt, fmt.Sprintf("we2e%d", 66+i), ids)
		})
	}
}

// try is call for goroutines other than the test's: it reports instead of
// failing.
func (s *server) try(method, path, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-KEY", s.apiKey)
	res, err := harnessClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return res.StatusCode, data, err
}
