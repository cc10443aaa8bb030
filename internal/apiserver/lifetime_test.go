package apiserver

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// connectRecorder notes the timeout each connect asks the manager for.
type connectRecorder struct {
	Sandboxes // only Get and Connect are called
	got       []time.Duration
}

func (c *connectRecorder) Get(context.Context, string) (*store.Sandbox, error) {
	return &store.Sandbox{ID: "sb1", State: store.SandboxPaused, TeamID: "alpha"}, nil
}

func (c *connectRecorder) Connect(_ context.Context, id string, timeout time.Duration, _ bool) (*store.Sandbox, bool, error) {
	c.got = append(c.got, timeout)
	return &store.Sandbox{ID: id, State: store.SandboxRunning}, true, nil
}

// TestConnectTimeoutReachesManager: a connect or resume without a timeout
// asks for none (the sandbox keeps what it had left); one with a timeout
// passes it on.
func TestConnectTimeoutReachesManager(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t)
	rec := &connectRecorder{}
	f.srv.Config.Handler = New(Options{Store: f.st, Manager: rec, Domain: "example.test", MaxTimeout: time.Hour})
	tests := []struct {
		path, body string
		want       time.Duration
	}{
		{"/v2/sandboxes/sb1/connect", ``, sandbox.NoTimeout},
		{"/v2/sandboxes/sb1/connect", `{}`, sandbox.NoTimeout},
		{"/v2/sandboxes/sb1/connect", `{"timeout":120}`, 2 * time.Minute},
		{"/sandboxes/sb1/connect", `{"timeout":300}`, 5 * time.Minute},
		{"/sandboxes/sb1/resume", `{}`, sandbox.NoTimeout},
		{"/sandboxes/sb1/resume", `{"timeout":60}`, time.Minute},
	}
	for i, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+tt.path, strings.NewReader(tt.body))
		req.Header.Set("X-API-KEY", f.keys["alpha"])
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || len(rec.got) != i+1 || rec.got[i] != tt.want {
			t.Fatalf("%s %s: status %d, manager asked for %v, want %s", tt.path, tt.body, resp.StatusCode, rec.got, tt.want)
		}
	}
}

// TestShownEnd: a paused sandbox shows when it paused as its endAt, as
// E2B does; a running one its end.
func TestShownEnd(t *testing.T) {
	t.Parallel()
	paused, end := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 10, 20, 0, 0, time.UTC)
	tests := []struct {
		name string
		sb   store.Sandbox
		want time.Time
	}{
		{"running", store.Sandbox{State: store.SandboxRunning, EndAt: end}, end},
		{"paused", store.Sandbox{State: store.SandboxPaused, EndAt: end, PausedAt: paused}, paused},
		{"paused, no pause time recorded", store.Sandbox{State: store.SandboxPaused, EndAt: end}, end},
	}
	for _, tt := range tests {
		if got := shownEnd(&tt.sb); !got.Equal(tt.want) {
			t.Errorf("%s: endAt %v, want %v", tt.name, got, tt.want)
		}
	}
}
