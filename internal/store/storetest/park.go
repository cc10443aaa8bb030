package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// Parked sandboxes: a paused sandbox that another node may take over when
// its own dies. The store's part is that the handover is one conditional
// write, and that the node it left can no longer write the record.
var parkTests = []test{
	{"RoundTrip", testParkRoundTrip},
	{"UpdateMatchesNode", testUpdateMatchesNode},
	{"Move", testMove},
	{"AfterMove", testAfterMove},
	{"MoveRace", testMoveRace},
}

// parkedOn returns a paused, parked sandbox on node.
func parkedOn(id, node string) *store.Sandbox {
	sb := newSandbox(id, 0)
	sb.State, sb.PausedAt, sb.Intent = store.SandboxPaused, at(1), ""
	sb.Parked, sb.Node = true, node
	return sb
}

// testParkRoundTrip: Parked and ShareID come back as written, either way,
// through every write and read.
func testParkRoundTrip(ctx context.Context, t *testing.T, s store.Store) {
	for i, parked := range []bool{true, false} {
		sb := parkedOn(fmt.Sprintf("sb%d", i), "a")
		sb.Parked = parked
		must(t, "CreateSandbox", s.CreateSandbox(ctx, sb))
		got, err := s.GetSandbox(ctx, sb.ID)
		must(t, "GetSandbox", err)
		wantEqual(t, fmt.Sprintf("GetSandbox parked=%v", parked), got, stored(sb))
		sb.Parked = !parked
		must(t, "UpdateSandbox", s.UpdateSandbox(ctx, sb))
		list, err := s.ListSandboxesOnNode(ctx, "a")
		must(t, "ListSandboxesOnNode", err)
		j := slices.IndexFunc(list, func(l *store.Sandbox) bool { return l.ID == sb.ID })
		if j < 0 {
			t.Fatalf("ListSandboxesOnNode(a) lacks %s", sb.ID)
		}
		wantEqual(t, fmt.Sprintf("listed after setting parked=%v", !parked), list[j], stored(sb))
	}
	for _, share := range []string{"nfs-1", ""} {
		n := newNode("n-"+share, 1)
		n.ShareID = share
		must(t, "PutNode", s.PutNode(ctx, n))
		got, err := s.GetNode(ctx, n.Name)
		must(t, "GetNode", err)
		wantEqual(t, fmt.Sprintf("GetNode share %q", share), got, storedNode(n))
		// A heartbeat replaces it like any other field.
		n.ShareID = "nfs-2"
		must(t, "PutNode again", s.PutNode(ctx, n))
		got, err = s.GetNode(ctx, n.Name)
		must(t, "GetNode after heartbeat", err)
		wantEqual(t, fmt.Sprintf("GetNode share %q replaced", share), got, storedNode(n))
	}
	list, err := s.ListNodes(ctx)
	must(t, "ListNodes", err)
	for _, n := range list {
		if n.ShareID != "nfs-2" {
			t.Errorf("ListNodes: node %s has share %q, want nfs-2", n.Name, n.ShareID)
		}
	}
}

// testUpdateMatchesNode: UpdateSandbox writes only the record of the node
// it names; for any other, the record stays as it was and the error is
// NotFound, as if it were gone.
func testUpdateMatchesNode(ctx context.Context, t *testing.T, s store.Store) {
	tests := []struct {
		name         string
		stored, with string // the record's node, the update's
		want         error
	}{
		{"same node", "a", "a", nil},
		{"one-machine", "", "", nil},
		{"other node", "a", "b", errdefs.ErrNotFound},
		{"no node for a node's", "a", "", errdefs.ErrNotFound},
		{"a node for one-machine's", "", "a", errdefs.ErrNotFound},
	}
	for i, tt := range tests {
		orig := parkedOn(fmt.Sprintf("sb%d", i), tt.stored)
		must(t, tt.name+": CreateSandbox", s.CreateSandbox(ctx, orig))
		up := parkedOn(orig.ID, tt.with)
		up.State, up.Parked, up.Metadata = store.SandboxRunning, false, map[string]string{"new": "value"}
		err := s.UpdateSandbox(ctx, up)
		wantErr(t, tt.name+": UpdateSandbox", err, tt.want)
		if tt.want != nil && !errdefs.IsNotFound(err) {
			t.Fatalf("%s: UpdateSandbox = %v, want errdefs.IsNotFound", tt.name, err)
		}
		want := orig
		if tt.want == nil {
			want = up
		}
		got, err := s.GetSandbox(ctx, orig.ID)
		must(t, tt.name+": GetSandbox", err)
		wantEqual(t, tt.name+": GetSandbox after update", got, stored(want))
	}
}

// testMove: MoveSandbox moves only a paused, parked sandbox still on from,
// and changes nothing but its node.
func testMove(ctx context.Context, t *testing.T, s store.Store) {
	tests := []struct {
		name   string
		edit   func(*store.Sandbox) // the stored record, from parkedOn(id, "a")
		id     string               // "" for the record's
		from   string
		want   error
		wantOn string
	}{
		{"moves", nil, "", "a", nil, "b"},
		{"wrong from", nil, "", "c", errdefs.ErrConflict, "a"},
		{"running", func(sb *store.Sandbox) { sb.State = store.SandboxRunning }, "", "a", errdefs.ErrConflict, "a"},
		{"not parked", func(sb *store.Sandbox) { sb.Parked = false }, "", "a", errdefs.ErrConflict, "a"},
		{"missing", nil, "nope", "a", errdefs.ErrNotFound, ""},
	}
	for i, tt := range tests {
		sb := parkedOn(fmt.Sprintf("sb%d", i), "a")
		if tt.edit != nil {
			tt.edit(sb)
		}
		must(t, tt.name+": CreateSandbox", s.CreateSandbox(ctx, sb))
		id := cmp.Or(tt.id, sb.ID)
		err := s.MoveSandbox(ctx, id, tt.from, "b")
		wantErr(t, tt.name+": MoveSandbox", err, tt.want)
		if tt.want == errdefs.ErrConflict && errdefs.IsNotFound(err) {
			t.Fatalf("%s: MoveSandbox = %v, a conflict that also says not found", tt.name, err)
		}
		if tt.wantOn == "" {
			continue
		}
		want := stored(sb)
		want.Node = tt.wantOn
		got, err := s.GetSandbox(ctx, id)
		must(t, tt.name+": GetSandbox", err)
		wantEqual(t, tt.name+": GetSandbox after MoveSandbox", got, want)
	}
}

// testAfterMove: a moved sandbox is listed as its new node's, and the node
// it left can no longer write it while the new one can.
func testAfterMove(ctx context.Context, t *testing.T, s store.Store) {
	sb := parkedOn("sb1", "a")
	must(t, "CreateSandbox", s.CreateSandbox(ctx, sb))
	must(t, "MoveSandbox", s.MoveSandbox(ctx, "sb1", "a", "b"))
	onNode := func(node string) []string {
		t.Helper()
		list, err := s.ListSandboxesOnNode(ctx, node)
		must(t, "ListSandboxesOnNode "+node, err)
		return ids(list)
	}
	wantEqual(t, "sandboxes on a", onNode("a"), []string{})
	wantEqual(t, "sandboxes on b", onNode("b"), []string{"sb1"})

	stale := parkedOn("sb1", "a")
	stale.State, stale.Parked = store.SandboxRunning, false
	wantErr(t, "UpdateSandbox by the old node", s.UpdateSandbox(ctx, stale), errdefs.ErrNotFound)
	wantErr(t, "MoveSandbox from the old node", s.MoveSandbox(ctx, "sb1", "a", "c"), errdefs.ErrConflict)
	got, err := s.GetSandbox(ctx, "sb1")
	must(t, "GetSandbox", err)
	want := stored(sb)
	want.Node = "b"
	wantEqual(t, "GetSandbox after the old node's writes", got, want)

	resumed := parkedOn("sb1", "b")
	resumed.State, resumed.Parked = store.SandboxRunning, false
	must(t, "UpdateSandbox by the new node", s.UpdateSandbox(ctx, resumed))
	got, err = s.GetSandbox(ctx, "sb1")
	must(t, "GetSandbox", err)
	wantEqual(t, "GetSandbox after the new node's write", got, stored(resumed))
}

// testMoveRace has every writer move one sandbox off node a, each to a
// node of its own, at once: exactly one wins, the rest are told of a
// conflict, and the sandbox ends on the winner's node.
func testMoveRace(ctx context.Context, t *testing.T, s store.Store) {
	must(t, "CreateSandbox", s.CreateSandbox(ctx, parkedOn("sb1", "a")))
	var (
		wg     sync.WaitGroup
		wins   atomic.Int32
		winner atomic.Value
	)
	for w := range writers {
		wg.Go(func() {
			to := fmt.Sprintf("t%d", w)
			err := s.MoveSandbox(ctx, "sb1", "a", to)
			switch {
			case err == nil:
				wins.Add(1)
				winner.Store(to)
			case !errors.Is(err, errdefs.ErrConflict):
				t.Errorf("MoveSandbox to %s: %v, want success or a conflict", to, err)
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d moves succeeded, want 1", n)
	}
	got, err := s.GetSandbox(ctx, "sb1")
	must(t, "GetSandbox", err)
	if got.Node != winner.Load() {
		t.Fatalf("sandbox is on %q, the winning move was to %q", got.Node, winner.Load())
	}
}
