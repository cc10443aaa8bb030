package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

func TestReapReportsADeadNodesSandboxes(t *testing.T) {
	st := sqlitetest.Open(t)
	ctx := context.Background()
	alive, dead := newFakeNode(t, st, "alive"), newFakeNode(t, st, "dead")
	alive.register(t, true, time.Unix(1, 0))
	dead.register(t, false, time.Unix(2, 0))
	for _, sb := range []*store.Sandbox{
		{ID: "keep", Node: "alive", State: store.SandboxRunning, TeamID: "t1"},
		{ID: "lost1", Node: "dead", State: store.SandboxRunning, TeamID: "t1", TemplateID: "base"},
		{ID: "lost2", Node: "dead", State: store.SandboxRunning, TeamID: "t2"},
		{ID: "parked", Node: "dead", State: store.SandboxPaused, TeamID: "t1"},
	} {
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	evs := &recorder{}
	// Two API processes reaping the same dead node report each loss once.
	a1, a2 := newTestAPI(st, evs), newTestAPI(st, evs)
	a1.reap(ctx)
	a2.reap(ctx)
	for id, want := range map[string]bool{"keep": true, "lost1": false, "lost2": false, "parked": true} {
		_, err := st.GetSandbox(ctx, id)
		if got := err == nil; got != want || (err != nil && !errdefs.IsNotFound(err)) {
			t.Errorf("sandbox %s stored = %v (err %v), want %v", id, got, err, want)
		}
	}
	if len(evs.evs) != 2 {
		t.Fatalf("recorded %d events, want one per lost sandbox: %+v", len(evs.evs), evs.evs)
	}
	for _, e := range evs.evs {
		var data map[string]string
		_ = json.Unmarshal(e.Data, &data)
		if e.Type != store.EventKilled || data["reason"] != "node-lost" || data["node"] != "dead" {
			t.Errorf("event %+v data %v, want killed, reason node-lost, node dead", e, data)
		}
		if e.SandboxID == "lost1" && (e.TeamID != "t1" || e.TemplateID != "base") {
			t.Errorf("event %+v: want the sandbox's team and template", e)
		}
	}
}

// TestReapCutsRequestsToADeadNode: a node cut off rather than down (its
// kernel still accepts) would hold relayed requests for ever; reaping it
// ends them with a 502.
func TestReapCutsRequestsToADeadNode(t *testing.T) {
	st := sqlitetest.Open(t)
	ctx := context.Background()
	n := newFakeNode(t, st, "silent")
	n.register(t, true, time.Unix(1, 0))
	release := make(chan struct{})
	defer close(release)
	n.answer = func(w http.ResponseWriter, r *http.Request) { <-release }
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "sb", Node: "silent", State: store.SandboxRunning}); err != nil {
		t.Fatal(err)
	}
	c := &clock{}
	api := newTestAPIAt(st, nil, c)
	key := map[string]string{"X-API-KEY": teamKey(t, st, "")}
	type answer struct {
		code int
		body map[string]any
	}
	done := make(chan answer, 1)
	go func() {
		code, body := do(t, api, "GET", "/sandboxes/sb", "", key)
		done <- answer{code, body}
	}()
	for len(n.requests()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	c.advance(testDeadAfter + nodesTTL + time.Second) // no beat since
	api.reap(ctx)
	select {
	case got := <-done:
		if got.code != http.StatusBadGateway || !strings.Contains(got.body["message"].(string), "stopped answering") {
			t.Errorf("cut request answered %d %v, want 502 saying the node stopped answering", got.code, got.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request to the dead node is still waiting after the reap")
	}
}

// TestKillOnADeadNode: a paused sandbox of a dead node (kept by the
// reaper for the node's return) can still be killed through the API.
func TestKillOnADeadNode(t *testing.T) {
	st := sqlitetest.Open(t)
	ctx := context.Background()
	dead := newFakeNode(t, st, "dead")
	dead.register(t, false, time.Unix(1, 0))
	for id, team := range map[string]string{"parked": "", "theirs": "other"} {
		if err := st.CreateSandbox(ctx, &store.Sandbox{ID: id, Node: "dead", State: store.SandboxPaused, TeamID: team}); err != nil {
			t.Fatal(err)
		}
	}
	evs := &recorder{}
	api := newTestAPI(st, evs)
	key := map[string]string{"X-API-KEY": teamKey(t, st, "")}
	if code, body := do(t, api, "DELETE", "/sandboxes/theirs", "", key); code != http.StatusNotFound {
		t.Errorf("kill of another team's: %d %v, want 404", code, body)
	}
	if code, body := do(t, api, "POST", "/sandboxes/parked/resume", "", key); code != http.StatusServiceUnavailable {
		t.Errorf("resume on a dead node: %d %v, want 503", code, body)
	}
	secret, rec, err := apikey.Create(apikey.Spec{Name: "reader", Scopes: []string{apikey.ScopeSandboxesRead}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateAPIKey(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, api, "DELETE", "/sandboxes/parked", "", map[string]string{"X-API-KEY": secret}); code != http.StatusForbidden {
		t.Errorf("kill with a read-only key: %d %v, want 403", code, body)
	}
	if code, body := do(t, api, "DELETE", "/sandboxes/parked", "", key); code != http.StatusNoContent {
		t.Fatalf("kill on a dead node: %d %v, want 204", code, body)
	}
	if _, err := st.GetSandbox(ctx, "parked"); !errdefs.IsNotFound(err) {
		t.Errorf("killed sandbox still stored: %v", err)
	}
	if _, err := st.GetSandbox(ctx, "theirs"); err != nil {
		t.Errorf("another team's sandbox gone: %v", err)
	}
	if code, _ := do(t, api, "DELETE", "/sandboxes/parked", "", key); code != http.StatusNotFound {
		t.Errorf("second kill: %d, want 404", code)
	}
	if len(evs.evs) != 1 || evs.evs[0].SandboxID != "parked" || !strings.Contains(string(evs.evs[0].Data), `"reason":"request"`) {
		t.Errorf("events %+v, want one killed event, reason request", evs.evs)
	}
	if len(dead.requests()) != 0 {
		t.Errorf("the dead node got %v", dead.requests())
	}
}

// TestReapIgnoresClockSkew: liveness is judged by when this process saw
// a node's heartbeat change, on its own clock: a node whose clock is
// behind (its stamps look old) keeps its sandboxes while it beats, and
// loses them once it stops for longer than the bound.
func TestReapIgnoresClockSkew(t *testing.T) {
	for _, skew := range []time.Duration{-25 * time.Second, -2 * time.Minute, 3 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			st := sqlitetest.Open(t)
			ctx := context.Background()
			c := &clock{}
			api := newTestAPIAt(st, &recorder{}, c)
			beat := func() {
				if err := st.PutNode(ctx, &store.Node{Name: "n", AdvertiseURL: "http://n", HeartbeatAt: c.now().Add(skew)}); err != nil {
					t.Fatal(err)
				}
			}
			beat()
			if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "sb", Node: "n", State: store.SandboxRunning}); err != nil {
				t.Fatal(err)
			}
			for range 10 { // 50 s of beats every 5 s
				c.advance(5 * time.Second)
				beat()
				api.reap(ctx)
			}
			if _, err := st.GetSandbox(ctx, "sb"); err != nil {
				t.Fatalf("a beating node's sandbox was reaped (node clock %v off): %v", skew, err)
			}
			c.advance(testDeadAfter + time.Second) // silent
			api.reap(ctx)
			if _, err := st.GetSandbox(ctx, "sb"); !errdefs.IsNotFound(err) {
				t.Fatalf("a silent node's sandbox was kept (node clock %v off): %v", skew, err)
			}
		})
	}
}

// TestReapHandsOverParked: a dead node's parked sandboxes go to a live
// node on the same shared storage (never to one on other storage, even
// with more room); paused ones that are not parked, and parked ones of a
// node without shared storage, wait for their node. Two API processes
// hand each over once.
func TestReapHandsOverParked(t *testing.T) {
	st := sqlitetest.Open(t)
	ctx := context.Background()
	now := time.Now()
	for _, n := range []*store.Node{
		{Name: "dead", ShareID: "s1", MemoryMB: 8192, HeartbeatAt: now.Add(-time.Hour)},
		{Name: "lonely", MemoryMB: 8192, HeartbeatAt: now.Add(-time.Hour)},
		{Name: "roomy", ShareID: "s2", MemoryMB: 65536, HeartbeatAt: now},
		{Name: "same", ShareID: "s1", MemoryMB: 4096, HeartbeatAt: now},
	} {
		n.AdvertiseURL, n.CPUs = "http://"+n.Name, 4
		if err := st.PutNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	sbs := []*store.Sandbox{
		{ID: "parked", Node: "dead", State: store.SandboxPaused, Parked: true, MemoryMB: 512},
		{ID: "paused", Node: "dead", State: store.SandboxPaused, MemoryMB: 512},
		{ID: "alone", Node: "lonely", State: store.SandboxPaused, Parked: true, MemoryMB: 512},
	}
	for _, sb := range sbs {
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	a1, a2 := newTestAPI(st, &recorder{}), newTestAPI(st, &recorder{})
	a1.reap(ctx)
	a2.reap(ctx)
	for id, want := range map[string]string{"parked": "same", "paused": "dead", "alone": "lonely"} {
		sb, err := st.GetSandbox(ctx, id)
		if err != nil || sb.Node != want || sb.State != store.SandboxPaused {
			t.Errorf("sandbox %s after the reap: %+v, %v; want paused on %s", id, sb, err, want)
		}
	}
}

// TestReapAtTheDeadline: a node that stops beating has its sandboxes
// reported lost DeadAfter after its last heartbeat, not once the API has
// read that heartbeat plus DeadAfter, and the reaper wakes for that
// moment instead of the tick after it. A node whose clock is off is
// dated by the API's reads around its heartbeat: at most one read
// interval early (clock behind) or late (clock ahead), never outside the
// documented bound of DeadAfter plus one heartbeat interval.
func TestReapAtTheDeadline(t *testing.T) {
	const every = 5 * time.Second // the API reads the store this often; nodes beat 3 s after each read
	t0 := time.Unix(1_000_000, 0)
	last := t0.Add(13 * time.Second) // the node's last heartbeat, by the API's clock
	for _, tc := range []struct {
		name string
		skew time.Duration // node clock minus API clock
		seen time.Time     // when its last heartbeat is dated: its sandbox goes testDeadAfter later
	}{
		{"in step", 0, last},
		{"node clock behind", -2 * time.Minute, t0.Add(10 * time.Second)}, // the last read that did not show the beat
		{"node clock ahead", 3 * time.Minute, t0.Add(15 * time.Second)},   // the read that showed it
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.seen.Before(last.Add(-every)) || tc.seen.After(last.Add(every)) {
				t.Fatalf("test table: %v is more than one read interval from the last heartbeat", tc.seen)
			}
			dead := tc.seen.Add(testDeadAfter)
			st := sqlitetest.Open(t)
			ctx := context.Background()
			c := &clock{base: t0}
			api := newTestAPIAt(st, &recorder{}, c)
			if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "sb", Node: "n", State: store.SandboxRunning}); err != nil {
				t.Fatal(err)
			}
			beat := func(at time.Time) {
				if err := st.PutNode(ctx, &store.Node{Name: "n", AdvertiseURL: "http://n", HeartbeatAt: at.Add(tc.skew)}); err != nil {
					t.Fatal(err)
				}
			}
			beat(t0.Add(-2 * time.Second))
			for at := t0; !at.After(last.Add(every)); at = at.Add(every) { // reads at 0, 5, 10, 15, 20 s
				c.advance(at.Sub(c.now()))
				api.reap(ctx)
				if b := at.Add(3 * time.Second); !b.After(last) {
					c.advance(3 * time.Second)
					beat(b)
				}
			}
			stillThere := func() bool {
				_, err := st.GetSandbox(ctx, "sb")
				return err == nil
			}
			if !stillThere() {
				t.Fatalf("reaped by %v, before the deadline %v", c.now().Sub(t0), dead.Sub(t0))
			}
			justBefore := dead.Add(-time.Millisecond)
			if justBefore.After(c.now()) {
				c.advance(justBefore.Sub(c.now()))
				if got := api.nextReap(); got != time.Millisecond {
					t.Errorf("the reaper sleeps %v a millisecond before the deadline, want 1ms", got)
				}
				api.reap(ctx)
				if !stillThere() {
					t.Fatalf("reaped a millisecond before the deadline %v", dead.Sub(t0))
				}
			}
			c.advance(dead.Sub(c.now()))
			api.reap(ctx)
			if stillThere() {
				t.Fatalf("still there at the deadline, %v after the last heartbeat", dead.Sub(last))
			}
		})
	}
}
