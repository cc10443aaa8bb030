package apiserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// TestDeleteNodeForgetsItsSandboxes: forgetting a dead node removes its
// record and its sandboxes' (each with a node-lost killed event) and
// leaves every other node's alone.
func TestDeleteNodeForgetsItsSandboxes(t *testing.T) {
	f := newRouteFixture(t)
	admin := f.addKey(t, apikey.Spec{Name: "admin", Admin: true})
	ctx := context.Background()
	for _, sb := range []*store.Sandbox{
		{ID: "gone1", Node: "node-retired", State: store.SandboxPaused, TeamID: "t1", StartedAt: time.Now()},
		{ID: "gone2", Node: "node-retired", State: store.SandboxPaused, StartedAt: time.Now()},
		{ID: "elsewhere", Node: "node-gone", State: store.SandboxPaused, StartedAt: time.Now()},
	} {
		if err := f.st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := f.call(t, admin, "DELETE", "/nodes/node-retired", ""); code != 204 {
		t.Fatalf("DELETE /nodes/node-retired: %d %s", code, body)
	}
	for id, want := range map[string]bool{"gone1": false, "gone2": false, "elsewhere": true} {
		_, err := f.st.GetSandbox(ctx, id)
		if got := err == nil; got != want || (err != nil && !errdefs.IsNotFound(err)) {
			t.Errorf("sandbox %s stored = %v (%v), want %v", id, got, err, want)
		}
	}
	if _, err := f.st.GetNode(ctx, "node-retired"); !errdefs.IsNotFound(err) {
		t.Errorf("node record still there: %v", err)
	}
	if code, body := f.call(t, admin, "GET", "/events/sandboxes/gone1", ""); code != 200 || !strings.Contains(body, `"reason":"node-lost"`) {
		t.Errorf("events of a forgotten node's sandbox: %d %s, want a node-lost kill", code, body)
	}
}
