package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

var claimTests = []test{
	{"Order", testClaimOrder},
	{"LeaseExpiry", testClaimLeaseExpiry},
	{"Race", func(ctx context.Context, t *testing.T, s store.Store) { ClaimRace(ctx, t, []store.Store{s}) }},
}

// claimSetup stores webhooks w1 and w2 and ds, each with an event of
// its own.
func claimSetup(ctx context.Context, t *testing.T, s store.Store, ds ...*store.Delivery) {
	t.Helper()
	must(t, "CreateWebhook", s.CreateWebhook(ctx, webhook("w1", "t1", 0)))
	must(t, "CreateWebhook", s.CreateWebhook(ctx, webhook("w2", "t1", 0)))
	for _, d := range ds {
		e := event("e-"+d.ID, "sb", "t1", store.EventCreated, 0)
		d.EventID = e.ID
		must(t, "CreateEvent", s.CreateEvent(ctx, e, []*store.Delivery{d}))
	}
}

// claim claims for a minute's lease.
func claim(ctx context.Context, t *testing.T, s store.Store, claimer string, now time.Time, limit int) []*store.Delivery {
	t.Helper()
	got, err := s.ClaimDeliveries(ctx, claimer, now, time.Minute, limit)
	must(t, "ClaimDeliveries("+claimer+")", err)
	return got
}

func wantClaimed(t *testing.T, what string, got []*store.Delivery, want ...string) {
	t.Helper()
	if g := ids(got); !slices.Equal(g, want) && !(len(g) == 0 && len(want) == 0) {
		t.Fatalf("%s claimed %v, want %v", what, g, want)
	}
}

// testClaimOrder: a claim takes each webhook's oldest due delivery, the
// earliest due first, never one of a webhook with a live lease; a
// delivery in backoff does not hold up later ones, but once due it goes
// before them.
func testClaimOrder(ctx context.Context, t *testing.T, s store.Store) {
	x := delivery("x", "w2", "", 1)
	x.Attempts, x.NextAttempt = 1, at(5).Add(30*time.Second) // failed once, waits
	claimSetup(ctx, t, s, delivery("a", "w1", "", 1), delivery("b", "w1", "", 2), delivery("c", "w1", "", 50),
		x, delivery("y", "w2", "", 4))
	first := claim(ctx, t, s, "c1", at(5), 1)
	wantClaimed(t, "limit 1", first, "a")
	if d := first[0]; d.ClaimedBy != "c1" || !d.LeaseUntil.Equal(at(6)) || d.LeaseUntil.Location() != time.UTC {
		t.Fatalf("claimed a = %+v, want claimed by c1 until %v, in UTC", d, at(6).UTC())
	}
	wantClaimed(t, "c1 again", claim(ctx, t, s, "c1", at(5), 10), "y")
	wantClaimed(t, "c2 while both webhooks are leased", claim(ctx, t, s, "c2", at(5), 10))
	a := first[0]
	a.Status, a.Attempts, a.LastStatus, a.NextAttempt, a.UpdatedAt = store.DeliveryDelivered, 1, 204, time.Time{}, at(5)
	wantErr(t, "CompleteDelivery(not the claimer)", s.CompleteDelivery(ctx, "c2", a), errdefs.ErrConflict)
	must(t, "CompleteDelivery", s.CompleteDelivery(ctx, "c1", a))
	wantErr(t, "CompleteDelivery(again)", s.CompleteDelivery(ctx, "c1", a), errdefs.ErrConflict)
	wantErr(t, "CompleteDelivery(unknown)", s.CompleteDelivery(ctx, "c1", delivery("nope", "w1", "e", 0)), errdefs.ErrNotFound)
	done := deliveries(ctx, t, s, "w1")["a"]
	if done.Status != store.DeliveryDelivered || done.Attempts != 1 || done.LastStatus != 204 || done.ClaimedBy != "" ||
		!done.LeaseUntil.IsZero() || !done.NextAttempt.IsZero() {
		t.Fatalf("completed a = %+v, want delivered with the lease cleared", done)
	}
	wantClaimed(t, "c2 after a completed", claim(ctx, t, s, "c2", at(5), 10), "b")
	must(t, "ReleaseDelivery", s.ReleaseDelivery(ctx, "c1", "y"))
	wantErr(t, "ReleaseDelivery(again)", s.ReleaseDelivery(ctx, "c1", "y"), errdefs.ErrConflict)
	if y := deliveries(ctx, t, s, "w2")["y"]; y.ClaimedBy != "" || y.Attempts != 0 || y.Status != store.DeliveryPending {
		t.Fatalf("released y = %+v, want pending, unclaimed, no attempt", y)
	}
	// x, due now, is older than y: it goes first; w1's b is still leased.
	wantClaimed(t, "c3 once x is due", claim(ctx, t, s, "c3", at(5).Add(30*time.Second), 10), "x")
}

// deliveries returns webhook w's deliveries by id.
func deliveries(ctx context.Context, t *testing.T, s store.Store, w string) map[string]*store.Delivery {
	t.Helper()
	ds, err := s.ListDeliveries(ctx, w, 0)
	must(t, "ListDeliveries", err)
	out := map[string]*store.Delivery{}
	for _, d := range ds {
		out[d.ID] = d
	}
	return out
}

// testClaimLeaseExpiry: a lease that ran out (its holder died) makes the
// delivery claimable again, by another claimer, and the first holder can
// no longer record its outcome.
func testClaimLeaseExpiry(ctx context.Context, t *testing.T, s store.Store) {
	claimSetup(ctx, t, s, delivery("a", "w1", "", 1), delivery("b", "w1", "", 2))
	got := claim(ctx, t, s, "c1", at(5), 10)
	wantClaimed(t, "c1", got, "a")
	wantClaimed(t, "c2 within the lease", claim(ctx, t, s, "c2", at(6).Add(-time.Nanosecond), 10))
	again := claim(ctx, t, s, "c2", at(6), 10)
	wantClaimed(t, "c2 once the lease ran out", again, "a")
	if again[0].ClaimedBy != "c2" || !again[0].LeaseUntil.Equal(at(7)) {
		t.Fatalf("reclaimed a = %+v, want claimed by c2 until %v", again[0], at(7).UTC())
	}
	a := got[0]
	a.Status, a.Attempts, a.UpdatedAt = store.DeliveryDelivered, 1, at(6)
	wantErr(t, "CompleteDelivery(expired holder)", s.CompleteDelivery(ctx, "c1", a), errdefs.ErrConflict)
	must(t, "CompleteDelivery(new holder)", s.CompleteDelivery(ctx, "c2", a))
	wantClaimed(t, "c1 after a completed", claim(ctx, t, s, "c1", at(6), 10), "b")
	// An expired lease nobody took again still takes its holder's outcome.
	b := deliveries(ctx, t, s, "w1")["b"]
	b.Status, b.Attempts, b.UpdatedAt = store.DeliveryFailed, 5, at(9)
	must(t, "CompleteDelivery(expired, not taken)", s.CompleteDelivery(ctx, "c1", b))
	for _, bad := range []struct {
		claimer string
		limit   int
	}{{"", 1}, {"c1", 0}} {
		_, err := s.ClaimDeliveries(ctx, bad.claimer, at(9), time.Minute, bad.limit)
		wantErr(t, "ClaimDeliveries(bad arguments)", err, errdefs.ErrInvalidArgument)
	}
}
