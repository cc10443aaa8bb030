package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/memstore"
)

// outageStore is a store whose node list fails while down.
type outageStore struct {
	store.Store
	down bool
}

func (s *outageStore) ListNodes(ctx context.Context) ([]*store.Node, error) {
	if s.down {
		return nil, fmt.Errorf("listing nodes: %w", errdefs.ErrUnavailable)
	}
	return s.Store.ListNodes(ctx)
}

// TestDirectoryStoreOutage: time the API could not read the store does
// not count against a node, which could not heartbeat either; time it
// could read and saw no beat does. The directory reads every second, as
// the reaper does.
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
			st := &outageStore{Store: memstore.New()}
			now := time.Unix(1_000_000, 0)
			dir := newDirectory(st, deadAfter, func() time.Time { return now })
			put := func() {
				if err := st.PutNode(ctx, &store.Node{Name: "n", HeartbeatAt: now}); err != nil {
					t.Fatal(err)
				}
			}
			read := func() {
				_, err := dir.all(ctx)
				if (err != nil) != st.down {
					t.Fatalf("read with the store down=%v: %v", st.down, err)
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
