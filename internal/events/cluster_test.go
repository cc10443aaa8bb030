package events

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestTwoServicesShareTheStore runs two Services over one store, as the
// processes of a cluster share one database: every event reaches every
// webhook exactly once, and each receiver gets its events in order.
func TestTwoServicesShareTheStore(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) store.Store{
		"sqlite": func(t *testing.T) store.Store {
			st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "warren.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testTwoServices(t, open(t))
		})
	}
}

func testTwoServices(t *testing.T, st store.Store) {
	const hooks, events = 3, 40
	var rs []*receiver
	for h := range hooks {
		id := fmt.Sprintf("h%d", h)
		r := newReceiver(t, "sec-"+id, func(int) int {
			time.Sleep(time.Millisecond) // long enough for the other Service to try the same webhook
			return http.StatusOK
		})
		addHook(t, st, id, "t1", r.srv.URL, store.EventTypes...)
		rs = append(rs, r)
	}
	services := []*Service{fixture(t, st, Options{Workers: 4}), fixture(t, st, Options{Workers: 4})}
	var want []string
	for i := range events {
		// Each records in turn, as the nodes of a cluster do, which wakes
		// its own worker; Sync keeps the store's order the record order.
		s := services[i%2]
		want = append(want, record(s, fmt.Sprintf("sb%d", i%5), "t1", store.EventUpdated).ID)
		s.Sync(t.Context())
		if i%8 == 0 {
			time.Sleep(2 * time.Millisecond) // let deliveries overlap recording
		}
	}
	for h, r := range rs {
		eventually(t, fmt.Sprintf("every event at h%d", h), func() bool { return len(r.received()) >= events })
	}
	time.Sleep(50 * time.Millisecond) // a double delivery would arrive by now
	for h, r := range rs {
		var got []string
		for _, p := range r.received() {
			got = append(got, p.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("h%d received %d events %v,\nwant each once, in order: %v", h, len(got), got, want)
		}
		for _, d := range deliveries(t, st, fmt.Sprintf("h%d", h)) {
			if d.Status != store.DeliveryDelivered || d.Attempts != 1 || d.ClaimedBy != "" {
				t.Errorf("delivery %+v, want delivered at the first attempt, unclaimed", d)
			}
		}
	}
}

// TestShutdownReleasesClaims: a worker stopped mid-attempt releases its
// claim, so another process need not wait for the lease to run out, and
// the attempt counts for nothing.
func TestShutdownReleasesClaims(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	started := make(chan struct{}, 1)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read, so the server notices the client hang up
		started <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	addHook(t, st, "h", "t1", hang.URL, store.EventCreated)
	s := New(Options{Store: st, Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	record(s, "sb1", "t1", store.EventCreated)
	<-started
	if d := deliveries(t, st, "h")[0]; d.ClaimedBy == "" || !d.LeaseUntil.After(time.Now()) {
		t.Fatalf("delivery during its attempt = %+v, want it leased", d)
	}
	cancel()
	<-done
	if d := deliveries(t, st, "h")[0]; d.ClaimedBy != "" || !d.LeaseUntil.IsZero() || d.Attempts != 0 || d.Status != store.DeliveryPending {
		t.Fatalf("delivery after shutdown = %+v, want pending, unclaimed, no attempt", d)
	}
}
