package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// outageStore is a store whose node list fails while down.
type outageStore struct {
	store.Store
	down bool
}

func (s *outageStore) GetSandbox(ctx context.Context, id string) (*store.Sandbox, error) {
	if s.down {
		return nil, fmt.Errorf("getting sandbox: %w", errdefs.ErrUnavailable)
	}
	return s.Store.GetSandbox(ctx, id)
}

func (s *outageStore) ListNodes(ctx context.Context) ([]*store.Node, error) {
	if s.down {
		return nil, fmt.Errorf("listing nodes: %w", errdefs.ErrUnavailable)
	}
	return s.Store.ListNodes(ctx)
}

// TestDirectoryStoreOutage: time the API could not read the store does
// not count against a node, which could not heartbeat either (meanwhile
// the last list answers, the nodes judged as then); time it could read
// and saw no beat does. The directory reads every second, as the reaper
// does.
func TestDirectoryStoreOutage(t *testing.T) {
	const deadAfter = 10 * time.Second
	for _, tc := range []struct {
		name       string
		outage     time.Duration // store unreadable, from a node's last beat on
		after      time.Duration // store readable again, still no beat
		beatsAgain bool          // the node beats once the store is back
		wantAlive  bool
	}{
		{"no outage, silent past the bound", 0, deadAfter + 2*time.Second, false, false},
		{"no outage, silent within the bound", 0, deadAfter - 2*time.Second, false, true},
		{"outage past the bound, then a beat", 2 * deadAfter, time.Second, true, true},
		{"outage past the bound, read before the node beats", 2 * deadAfter, 2 * time.Second, false, true},
		{"outage past the bound, silent a bound after it", 2 * deadAfter, deadAfter + 2*time.Second, false, false},
		{"short outage counts as watched", deadAfter / 4, deadAfter, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := &outageStore{Store: sqlitetest.Open(t)}
			now := time.Unix(1_000_000, 0)
			dir := newDirectory(st, deadAfter, func() time.Time { return now })
			put := func() {
				if err := st.PutNode(ctx, &store.Node{Name: "n", HeartbeatAt: now}); err != nil {
					t.Fatal(err)
				}
			}
			read := func() {
				// With the store down: the last list.
				if nodes, err := dir.all(ctx); err != nil || len(nodes) != 1 {
					t.Fatalf("read with the store down=%v: %v, %v", st.down, nodes, err)
				}
			}
			put()
			read()
			st.down = tc.outage > 0
			tick := func(d time.Duration) {
				for end := now.Add(d); now.Before(end); {
					now = now.Add(time.Second)
					read()
				}
			}
			tick(tc.outage)
			if _, alive, _ := dir.node(ctx, "n"); st.down && !alive {
				t.Errorf("the node is dead %v into the outage: judge it as last seen", tc.outage)
			}
			st.down = false
			if tc.beatsAgain {
				put()
			}
			tick(tc.after)
			n, alive, err := dir.node(ctx, "n")
			if err != nil || n == nil {
				t.Fatalf("node: %v, %v", n, err)
			}
			if alive != tc.wantAlive {
				t.Errorf("alive = %v, want %v", alive, tc.wantAlive)
			}
		})
	}
}

// TestDirectoryOwnerDuringOutage: with the store unavailable, a sandbox's
// node is what was last known of it, however old; one never seen is the
// store's error.
func TestDirectoryOwnerDuringOutage(t *testing.T) {
	ctx := context.Background()
	st := &outageStore{Store: sqlitetest.Open(t)}
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "known", Node: "n", TeamID: "t"}); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	dir := newDirectory(st, 10*time.Second, func() time.Time { return now })
	if o, err := dir.owner(ctx, "known"); err != nil || o.node != "n" {
		t.Fatalf("owner: %+v, %v", o, err)
	}
	now = now.Add(2 * ownerTTL)
	st.down = true
	for _, tc := range []struct {
		id, node    string
		unavailable bool
	}{
		{"known", "n", false},
		{"unknown", "", true},
	} {
		o, err := dir.owner(ctx, tc.id)
		if o.node != tc.node || errors.Is(err, errdefs.ErrUnavailable) != tc.unavailable {
			t.Errorf("owner of %s with the store down: %+v, %v; want node %q, unavailable %v", tc.id, o, err, tc.node, tc.unavailable)
		}
	}
}
