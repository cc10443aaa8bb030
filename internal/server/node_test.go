package server

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestHeartbeat: a node's record appears at once with its capacity, what
// its running sandboxes reserve (paused ones reserve nothing) and the
// templates cached on the host; each interval moves its heartbeat on, a
// failed beat does not stop the loop, and it stops with its context.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cached := t.TempDir()
	for _, tpl := range []*store.Template{{ID: "base", RootfsPath: cached}, {ID: "elsewhere", RootfsPath: cached + "/missing"}} {
		if err := st.PutTemplate(ctx, tpl); err != nil {
			t.Fatal(err)
		}
	}
	var clock atomic.Int64
	var failCapacity atomic.Bool
	h := &heartbeat{
		st:       st,
		self:     store.Node{Name: "n1", AdvertiseURL: "http://10.0.0.7:3000", Version: "v1", StartedAt: time.Unix(100, 0).UTC()},
		interval: 5 * time.Millisecond,
		census: func() []sandbox.Live {
			return []sandbox.Live{{Running: true, CPUCount: 2, MemoryMB: 512}, {Running: true, CPUCount: 1, MemoryMB: 256}, {CPUCount: 4, MemoryMB: 4096}}
		},
		capacity: func() (int, int64, int64, error) {
			if failCapacity.Load() {
				return 0, 0, 0, errors.New("no /proc")
			}
			return 8, 16384, 100000, nil
		},
		now: func() time.Time { return time.Unix(clock.Add(1), 0) },
	}
	done := make(chan struct{})
	go func() { h.run(ctx); close(done) }()

	first := waitNode(t, st, func(n *store.Node) bool { return true })
	want := store.Node{Name: "n1", AdvertiseURL: "http://10.0.0.7:3000", CPUs: 8, MemoryMB: 16384, DiskMB: 100000,
		Sandboxes: 2, ReservedCPUs: 3, ReservedMemoryMB: 768, Templates: []string{"base"}, Version: "v1",
		StartedAt: time.Unix(100, 0).UTC(), HeartbeatAt: first.HeartbeatAt}
	if first.Name != want.Name || first.CPUs != want.CPUs || first.Sandboxes != want.Sandboxes ||
		first.ReservedCPUs != want.ReservedCPUs || first.ReservedMemoryMB != want.ReservedMemoryMB ||
		len(first.Templates) != 1 || first.Templates[0] != "base" || !first.StartedAt.Equal(want.StartedAt) ||
		first.DiskMB != want.DiskMB || first.MemoryMB != want.MemoryMB || first.AdvertiseURL != want.AdvertiseURL {
		t.Fatalf("node record = %+v, want %+v", first, want)
	}
	failCapacity.Store(true)
	time.Sleep(4 * h.interval)
	failCapacity.Store(false)
	waitNode(t, st, func(n *store.Node) bool { return n.HeartbeatAt.After(first.HeartbeatAt) })
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("heartbeat loop did not stop with its context")
	}
}

// waitNode polls n1's record until ok holds.
func waitNode(t *testing.T, st store.Store, ok func(*store.Node) bool) *store.Node {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if n, err := st.GetNode(t.Context(), "n1"); err == nil && ok(n) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("node record never as expected")
	return nil
}

// TestHostCapacity reads this machine's: every figure positive.
func TestHostCapacity(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	cpus, mem, disk, err := hostCapacity(t.TempDir())
	if err != nil || cpus <= 0 || mem <= 0 || disk <= 0 {
		t.Fatalf("hostCapacity = %d CPUs, %d MB, %d MB disk, %v", cpus, mem, disk, err)
	}
}

// TestNodeName: only a node stamps its name; the one-machine server
// stamps none, whatever --node-name defaulted to.
func TestNodeName(t *testing.T) {
	t.Parallel()
	c := validConfig()
	c.NodeName = "host1"
	if got := nodeName(&c); got != "" {
		t.Fatalf("role all: node name %q, want none", got)
	}
	asNode(&c)
	if got := nodeName(&c); got != "n1" {
		t.Fatalf("role node: node name %q, want n1", got)
	}
}

// stuckStore's first PutNode waits for its context, as a write on a
// connection into a partition does.
type stuckStore struct {
	store.Store
	stuck atomic.Bool
}

func (s *stuckStore) PutNode(ctx context.Context, n *store.Node) error {
	if s.stuck.CompareAndSwap(false, true) {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.PutNode(ctx, n)
}

// TestHeartbeatStuck: a beat stuck in the store gives up within its bound
// (here a third of --node-dead-after), and the next one is written.
func TestHeartbeatStuck(t *testing.T) {
	t.Parallel()
	st := &stuckStore{Store: sqlitetest.Open(t)}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h := &heartbeat{
		st: st, self: store.Node{Name: "n1"}, interval: 5 * time.Millisecond, deadAfter: 60 * time.Millisecond,
		census:   func() []sandbox.Live { return nil },
		capacity: func() (int, int64, int64, error) { return 1, 1, 1, nil },
		now:      time.Now,
	}
	if got := h.beatTimeout(); got != 20*time.Millisecond {
		t.Errorf("beat timeout %v, want a third of --node-dead-after", got)
	}
	go h.run(ctx)
	waitNode(t, st, func(n *store.Node) bool { return true })
	if !st.stuck.Load() {
		t.Fatal("the first beat was not the stuck one")
	}
}
