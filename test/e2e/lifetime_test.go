package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestPauseKeepsLifetime: a sandbox paused with time left resumes with
// that time, not a default: by a connect without a timeout (JS SDK 2.51),
// after a server restart while paused, and by a v1 connect that sends a
// shorter timeout (JS 2.50 and Python send their 300 s default), which
// never shortens it. A longer explicit timeout is honoured. While paused,
// endAt shows when it paused, as E2B.
func TestPauseKeepsLifetime(t *testing.T) {
	cfg := loadConfig(t)
	o := serverOpts{index: 186, runtime: cfg.runtimes[0], dataDir: t.TempDir()}
	s := launchServer(t, cfg, o)
	id := s.createSandbox(t, `{"templateID":"base","timeout":120}`)
	created := sandboxEnd(t, s, id)
	time.Sleep(2 * time.Second)
	left := time.Until(created.EndAt)

	pause := func(s *server) {
		s.mustCall(t, "POST", "/sandboxes/"+id+"/pause", `{}`, http.StatusNoContent)
		if info := sandboxEnd(t, s, id); info.State != "paused" || time.Since(info.EndAt) > 5*time.Second || time.Since(info.EndAt) < 0 {
			t.Fatalf("paused: %+v, want endAt at the pause", info)
		}
	}
	pause(s)
	time.Sleep(2 * time.Second) // paused time does not count
	s.mustCall(t, "POST", "/v2/sandboxes/"+id+"/connect", `{}`, http.StatusCreated)
	wantLeftAbout(t, s, id, "connect without a timeout", left)

	pause(s)
	s.stopLeavingSandboxes(t)
	o.apiKey = s.apiKey
	s = launchServer(t, cfg, o)
	s.mustCall(t, "POST", "/v2/sandboxes/"+id+"/connect", ``, http.StatusCreated)
	wantLeftAbout(t, s, id, "after a restart while paused", left)

	pause(s)
	s.mustCall(t, "POST", "/sandboxes/"+id+"/connect", `{"timeout":300}`, http.StatusCreated)
	wantLeftAbout(t, s, id, "v1 connect with 300 s", 300*time.Second)
	pause(s)
	s.mustCall(t, "POST", "/sandboxes/"+id+"/connect", `{"timeout":60}`, http.StatusCreated)
	wantLeftAbout(t, s, id, "v1 connect with a shorter timeout", 300*time.Second)
	pause(s)
	s.mustCall(t, "POST", "/sandboxes/"+id+"/resume", `{"timeout":900}`, http.StatusCreated)
	wantLeftAbout(t, s, id, "resume with a longer timeout", 900*time.Second)
	s.mustCall(t, "DELETE", "/sandboxes/"+id, "", http.StatusNoContent)
}

type sandboxTimes struct {
	State string    `json:"state"`
	EndAt time.Time `json:"endAt"`
}

func sandboxEnd(t *testing.T, s *server, id string) sandboxTimes {
	t.Helper()
	var info sandboxTimes
	if err := json.Unmarshal(s.mustCall(t, "GET", "/sandboxes/"+id, "", http.StatusOK), &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// wantLeftAbout checks the running sandbox ends about want from now: the
// margin covers the time requests take on a busy machine, far below the
// 300 s default a resume would otherwise get.
func wantLeftAbout(t *testing.T, s *server, id, what string, want time.Duration) {
	t.Helper()
	info := sandboxEnd(t, s, id)
	got := time.Until(info.EndAt)
	if info.State != "running" || got > want+2*time.Second || got < want-15*time.Second {
		t.Fatalf("%s: %s with %s left, want running with about %s", what, info.State, got.Round(time.Second), want)
	}
	t.Logf("%s: %s left", what, got.Round(time.Second))
}
