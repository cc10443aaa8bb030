package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/retention"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// TestReconcileOwnNodeOnly: on a shared store a node re-adopts and reaps
// only its own sandboxes. Another node's running sandbox has no instance
// on this host, which for one of its own would mean "died while down";
// reaping it would kill a sandbox that is alive elsewhere.
func TestReconcileOwnNodeOnly(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) { o.NodeName = "a" })
	mine := e.create(t, sandbox.CreateRequest{})
	if mine.Node != "a" {
		t.Fatalf("created sandbox's node = %q, want a", mine.Node)
	}
	e.m.Shutdown(context.Background())
	theirs := &store.Sandbox{ID: "theirs", TemplateID: "base", Backend: "fake", State: store.SandboxRunning,
		Node: "b", StartedAt: time.Now().UTC(), EndAt: time.Now().Add(time.Minute).UTC()}
	// Control: a record of this node without an instance is reaped, so
	// the test fails if the filter keeps nothing.
	lost := *theirs
	lost.ID, lost.Node = "lost", "a"
	for _, sb := range []*store.Sandbox{theirs, &lost} {
		if err := e.st.CreateSandbox(e.ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	m2 := e.restart(t)
	if _, err := m2.Get(e.ctx, mine.ID); err != nil {
		t.Fatalf("own sandbox not re-adopted: %v", err)
	}
	got, err := e.st.GetSandbox(e.ctx, "theirs")
	if err != nil {
		t.Fatalf("another node's sandbox was reaped: %v", err)
	}
	if got.State != store.SandboxRunning || got.Intent != "" || got.Node != "b" {
		t.Fatalf("another node's sandbox was changed: %+v", got)
	}
	if _, err := m2.Get(e.ctx, "theirs"); !errdefs.IsNotFound(err) {
		t.Fatalf("another node's sandbox was adopted: %v", err)
	}
	if _, err := e.st.GetSandbox(e.ctx, "lost"); !errdefs.IsNotFound(err) {
		t.Fatalf("own sandbox without an instance was kept: %v", err)
	}
}

// TestQuotaCountsCluster: a team's quota counts its running sandboxes on
// every node, from the store; paused ones count for nothing.
func TestQuotaCountsCluster(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) {
		o.NodeName = "a"
		o.Quota = func(context.Context, string) (sandbox.Quota, error) { return sandbox.Quota{Sandboxes: 2}, nil }
	})
	for i, state := range []string{store.SandboxRunning, store.SandboxPaused} {
		sb := &store.Sandbox{ID: "b" + string(rune('0'+i)), TemplateID: "base", Backend: "fake",
			State: state, Node: "b", TeamID: store.DefaultTeam}
		if err := e.st.CreateSandbox(e.ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	e.create(t, sandbox.CreateRequest{}) // one on b, one here: the quota's two
	_, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute})
	if !errors.Is(err, errdefs.ErrQuotaExceeded) {
		t.Fatalf("third sandbox of the team across nodes: err = %v, want quota exceeded", err)
	}
}

// TestSnapshotRetentionOwnNode: on a node, snapshot retention retires the
// node's own snapshots (their directory is on this host) and leaves
// another node's record alone, whose directory is elsewhere.
func TestSnapshotRetentionOwnNode(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) { o.NodeName = "a" })
	r := retention.New(machine{e.m, e.snaps}, retention.Options{Snapshots: time.Hour, OnNode: true})
	sb := e.create(t, sandbox.CreateRequest{})
	mine, err := e.snaps.Snapshot(e.ctx, sb.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	theirs := &store.Snapshot{ID: "theirs", Dir: "/nonexistent/other-node/snapshots/theirs", CreatedAt: time.Now().UTC()}
	if err := e.st.CreateSnapshot(e.ctx, theirs); err != nil {
		t.Fatal(err)
	}
	r.Retain(e.ctx, time.Now().Add(2*time.Hour))
	if _, err := e.st.GetSnapshot(e.ctx, mine.ID); !errdefs.IsNotFound(err) {
		t.Errorf("own snapshot past its retention kept: %v", err)
	}
	if _, err := e.st.GetSnapshot(e.ctx, "theirs"); err != nil {
		t.Errorf("another node's snapshot was retired here: %v", err)
	}
}

// TestDropLost: a node destroys the sandboxes whose records the cluster
// deleted while it was silent (reported node-lost), records no event of
// its own for them, and keeps those still recorded.
func TestDropLost(t *testing.T) {
	t.Parallel()
	evs := &eventLog{}
	e := newEnvWith(t, func(o *Options) { o.NodeName = "a"; o.Events = evs })
	lost, kept := e.create(t, sandbox.CreateRequest{}), e.create(t, sandbox.CreateRequest{})
	if err := e.st.DeleteSandbox(e.ctx, lost.ID); err != nil { // as the API role's reaper does
		t.Fatal(err)
	}
	before := len(evs.of(lost.ID))
	n, err := e.m.DropLost(e.ctx)
	if err != nil || n != 1 {
		t.Fatalf("DropLost = %d, %v; want 1 destroyed", n, err)
	}
	if _, err := e.m.Get(e.ctx, lost.ID); !errdefs.IsNotFound(err) {
		t.Errorf("lost sandbox still live: %v", err)
	}
	if _, err := e.m.Get(e.ctx, kept.ID); err != nil {
		t.Errorf("recorded sandbox dropped: %v", err)
	}
	if got := e.instances(t); got != 1 {
		t.Errorf("%d instances left, want only the recorded sandbox's", got)
	}
	if got := evs.of(lost.ID)[before:]; len(got) != 0 {
		t.Errorf("events %v recorded for a sandbox the API role already reported", got)
	}
	if n, err := e.m.DropLost(e.ctx); err != nil || n != 0 {
		t.Errorf("second DropLost = %d, %v; want nothing left to drop", n, err)
	}
}
