package storetest

import (
	"context"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// newNode returns a node with every field set.
func newNode(name string, hbMin int) *store.Node {
	return &store.Node{
		Name:             name,
		AdvertiseURL:     "http://10.0.0.7:3000",
		CPUs:             16,
		MemoryMB:         64 << 10,
		DiskMB:           1 << 21, // 2 TB: past 32 bits in bytes, not in MB
		Sandboxes:        3,
		ReservedCPUs:     6,
		ReservedMemoryMB: 3 << 10,
		Templates:        []string{"base", "code-interpreter-v1"},
		ShareID:          "nfs-1",
		Version:          "0.1.0",
		StartedAt:        at(0),
		HeartbeatAt:      at(hbMin),
	}
}

func storedNode(n *store.Node) *store.Node {
	c := *n
	c.StartedAt, c.HeartbeatAt = n.StartedAt.UTC(), n.HeartbeatAt.UTC()
	return &c
}

var nodeTests = []test{
	{"PutGetListDelete", func(ctx context.Context, t *testing.T, s store.Store) {
		_, err := s.GetNode(ctx, "a")
		wantErr(t, "GetNode never put", err, errdefs.ErrNotFound)
		a := newNode("a", 1)
		must(t, "PutNode a", s.PutNode(ctx, a))
		must(t, "PutNode b", s.PutNode(ctx, newNode("b", 1)))
		got, err := s.GetNode(ctx, "a")
		must(t, "GetNode", err)
		wantEqual(t, "GetNode", got, storedNode(a))

		// The heartbeat: a second put replaces every field.
		a.HeartbeatAt, a.Sandboxes, a.Templates, a.AdvertiseURL = at(2), 0, nil, "http://10.0.0.8:3000"
		must(t, "PutNode again", s.PutNode(ctx, a))
		got, err = s.GetNode(ctx, "a")
		must(t, "GetNode after heartbeat", err)
		wantEqual(t, "GetNode after heartbeat", got, storedNode(a))

		list, err := s.ListNodes(ctx)
		must(t, "ListNodes", err)
		if len(list) != 2 || list[0].Name != "a" || list[1].Name != "b" {
			t.Fatalf("ListNodes = %+v, want a then b", list)
		}
		must(t, "DeleteNode", s.DeleteNode(ctx, "a"))
		wantErr(t, "DeleteNode again", s.DeleteNode(ctx, "a"), errdefs.ErrNotFound)
		_, err = s.GetNode(ctx, "a")
		wantErr(t, "GetNode deleted", err, errdefs.ErrNotFound)
		wantErr(t, "PutNode no name", s.PutNode(ctx, &store.Node{}), errdefs.ErrInvalidArgument)
	}},
	{"Copies", func(ctx context.Context, t *testing.T, s store.Store) {
		n := newNode("a", 1)
		must(t, "PutNode", s.PutNode(ctx, n))
		n.Templates[0] = "changed"
		got, err := s.GetNode(ctx, "a")
		must(t, "GetNode", err)
		if got.Templates[0] != "base" {
			t.Fatalf("the store kept the caller's slice: templates %v", got.Templates)
		}
	}},
	{"SandboxesOnNode", testSandboxesOnNode},
}

// testSandboxesOnNode: the filter a node reconciles by returns exactly its
// own sandboxes, newest first, and "" those of one-machine mode.
func testSandboxesOnNode(ctx context.Context, t *testing.T, s store.Store) {
	for i, node := range []string{"a", "b", "a", ""} {
		sb := newSandbox(string(rune('1'+i)), i)
		sb.Node = node
		must(t, "CreateSandbox", s.CreateSandbox(ctx, sb))
	}
	ids := func(node string) []string {
		t.Helper()
		list, err := s.ListSandboxesOnNode(ctx, node)
		must(t, "ListSandboxesOnNode "+node, err)
		var out []string
		for _, sb := range list {
			if sb.Node != node {
				t.Errorf("ListSandboxesOnNode(%q) returned %s of node %q", node, sb.ID, sb.Node)
			}
			out = append(out, sb.ID)
		}
		return out
	}
	wantEqual(t, "node a", ids("a"), []string{"3", "1"})
	wantEqual(t, "node b", ids("b"), []string{"2"})
	wantEqual(t, "no node", ids(""), []string{"4"})
	wantEqual(t, "unknown node", ids("c"), []string(nil))
	all, err := s.ListSandboxes(ctx)
	must(t, "ListSandboxes", err)
	wantEqual(t, "ListSandboxes", len(all), 4)
}
