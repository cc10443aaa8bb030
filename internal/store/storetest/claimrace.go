package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// Sizes of ClaimRace: few webhooks, so claimers contend for each.
const (
	raceHooks    = 4
	racePerHook  = 12
	raceClaimers = 8
)

// ClaimRace has raceClaimers goroutines, spread over stores (handles of
// one database, as several processes of a cluster hold), claim and
// complete deliveries of a few webhooks at once until all are delivered.
// No delivery may be claimed twice, no webhook may have two deliveries
// held at once, and each webhook's deliveries are claimed in order.
func ClaimRace(ctx context.Context, t *testing.T, stores []store.Store) {
	t.Helper()
	s := stores[0]
	for h := range raceHooks {
		w := fmt.Sprintf("w%d", h)
		must(t, "CreateWebhook", s.CreateWebhook(ctx, webhook(w, "t1", 0)))
		for i := range racePerHook {
			id := fmt.Sprintf("%s-%02d", w, i)
			d := delivery(id, w, "e-"+id, i)
			must(t, "CreateEvent", s.CreateEvent(ctx, event("e-"+id, "sb", "t1", store.EventCreated, i), []*store.Delivery{d}))
		}
	}
	r := &raceLog{held: map[string]string{}, next: map[string]int{}, seen: map[string]bool{}}
	var wg sync.WaitGroup
	for c := range raceClaimers {
		wg.Go(func() { r.claimer(ctx, t, stores[c%len(stores)], fmt.Sprintf("c%d", c)) })
	}
	wg.Wait()
	if len(r.seen) != raceHooks*racePerHook {
		t.Fatalf("%d deliveries claimed, want %d", len(r.seen), raceHooks*racePerHook)
	}
	pending, err := s.PendingDeliveries(ctx, 0)
	must(t, "PendingDeliveries", err)
	if len(pending) != 0 {
		t.Fatalf("deliveries left pending: %v", ids(pending))
	}
}

// raceLog checks ClaimRace's claims as they happen.
type raceLog struct {
	mu   sync.Mutex
	held map[string]string // webhook → the delivery a claimer holds
	next map[string]int    // webhook → the index its next claim must have
	seen map[string]bool   // deliveries claimed
	done int
}

// claimer claims and completes until every delivery is done.
func (r *raceLog) claimer(ctx context.Context, t *testing.T, s store.Store, name string) {
	now := at(racePerHook + 1) // everything is due
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		got, err := s.ClaimDeliveries(ctx, name, now, time.Hour, 3)
		if err != nil {
			t.Errorf("%s: ClaimDeliveries: %v", name, err)
			return
		}
		for _, d := range got {
			if !r.take(t, name, d) {
				return
			}
			r.release(d.WebhookID)
			d.Status, d.Attempts, d.UpdatedAt = store.DeliveryDelivered, 1, now
			if err := s.CompleteDelivery(ctx, name, d); err != nil {
				t.Errorf("%s: CompleteDelivery(%s): %v", name, d.ID, err)
				return
			}
		}
		if r.finished() {
			return
		}
		if len(got) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	t.Errorf("%s: deliveries still pending after a minute", name)
}

// take records name's claim of d, failing t on a double or out-of-order
// claim, and lets the webhook go again: it is released in the log before
// the store, so a claim the store allows never finds it held here.
func (r *raceLog) take(t *testing.T, name string, d *store.Delivery) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var idx int
	if _, err := fmt.Sscanf(d.ID[len(d.WebhookID)+1:], "%d", &idx); err != nil {
		t.Errorf("delivery id %q: %v", d.ID, err)
		return false
	}
	switch {
	case r.seen[d.ID]:
		t.Errorf("%s claimed %s, which was claimed before", name, d.ID)
	case r.held[d.WebhookID] != "":
		t.Errorf("%s claimed %s while %s of the same webhook was held", name, d.ID, r.held[d.WebhookID])
	case idx != r.next[d.WebhookID]:
		t.Errorf("%s claimed %s out of order: index %d, want %d", name, d.ID, idx, r.next[d.WebhookID])
	case d.ClaimedBy != name:
		t.Errorf("%s claimed %s, which says it is claimed by %q", name, d.ID, d.ClaimedBy)
	default:
		r.seen[d.ID], r.held[d.WebhookID], r.next[d.WebhookID] = true, d.ID, idx+1
		r.done++
		return true
	}
	return false
}

func (r *raceLog) finished() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done == raceHooks*racePerHook
}

// release clears webhook w's hold in the log.
func (r *raceLog) release(w string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held, w)
}
