package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

var statsTests = []test{
	{"Sums", testDeliveryStats},
	{"GoWithDeliveries", testDeliveryStatsPruned},
}

// attemptOutcome is one attempt to record with CompleteDelivery.
type attemptOutcome struct {
	claimAt  int    // minute of the claim, which must return delivery id
	id       string // the delivery
	status   string // its state after the attempt
	attempts int
	answered int // the receiver's HTTP status; 0 for none
	errMsg   string
	took     time.Duration
}

// statsScript: webhook w1 delivers a at once, b at the second attempt
// (a 500 first), gives up on c after one attempt, and has e pending;
// w2 delivers d. Attempts are made at their claim's minute.
var statsScript = []attemptOutcome{
	{claimAt: 10, id: "a", status: store.DeliveryDelivered, attempts: 1, answered: 200, took: 100 * time.Millisecond},
	{claimAt: 10, id: "d", status: store.DeliveryDelivered, attempts: 1, answered: 204, took: 50 * time.Millisecond},
	{claimAt: 11, id: "b", status: store.DeliveryPending, attempts: 1, answered: 500, errMsg: "the receiver answered 500", took: 300 * time.Millisecond},
	{claimAt: 12, id: "c", status: store.DeliveryFailed, attempts: 1, errMsg: "no answer within 1s", took: time.Second},
	{claimAt: 30, id: "b", status: store.DeliveryDelivered, attempts: 2, answered: 200, took: 200 * time.Millisecond},
}

// runStatsScript stores the deliveries and makes statsScript's attempts.
func runStatsScript(ctx context.Context, t *testing.T, s store.Store) {
	t.Helper()
	claimSetup(ctx, t, s, delivery("a", "w1", "", 1), delivery("b", "w1", "", 2), delivery("c", "w1", "", 3),
		delivery("d", "w2", "", 4), delivery("e", "w1", "", 60))
	held := map[string]*store.Delivery{}
	for _, o := range statsScript {
		if held[o.id] == nil {
			for _, d := range claim(ctx, t, s, "c1", at(o.claimAt), 10) {
				held[d.ID] = d
			}
		}
		d := held[o.id]
		if d == nil {
			t.Fatalf("the claim at minute %d did not return %s", o.claimAt, o.id)
		}
		delete(held, o.id)
		d.Status, d.Attempts, d.LastStatus, d.LastError = o.status, o.attempts, o.answered, o.errMsg
		d.LastDuration, d.UpdatedAt, d.NextAttempt = o.took, at(o.claimAt), time.Time{}
		if o.status == store.DeliveryPending {
			d.NextAttempt = at(30)
		}
		must(t, "CompleteDelivery("+o.id+")", s.CompleteDelivery(ctx, "c1", d))
	}
}

// testDeliveryStats: DeliveryStats counts pending deliveries whenever
// made, settled ones and attempts since its start, the attempts'
// durations (mean, nearest-rank median and 95th percentile, max), and
// the newest success and failure of all; a delivery keeps its last
// attempt's duration.
func testDeliveryStats(ctx context.Context, t *testing.T, s store.Store) {
	runStatsScript(ctx, t, s)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	last := store.DeliveryStats{LastSuccess: at(30).UTC(), LastFailure: at(12).UTC(), LastError: "no answer within 1s"}
	with := func(st store.DeliveryStats) store.DeliveryStats {
		st.LastSuccess, st.LastFailure, st.LastError = last.LastSuccess, last.LastFailure, last.LastError
		return st
	}
	cases := []struct {
		name, webhook string
		since         int
		want          store.DeliveryStats
	}{
		{"all of w1", "w1", 0, with(store.DeliveryStats{Pending: 1, Delivered: 2, Failed: 1, Attempts: 4, FailedAttempts: 2,
			MeanDuration: ms(400), P50Duration: ms(200), P95Duration: ms(1000), MaxDuration: ms(1000)})},
		{"w1 from minute 11", "w1", 11, with(store.DeliveryStats{Pending: 1, Delivered: 1, Failed: 1, Attempts: 3, FailedAttempts: 2,
			MeanDuration: ms(500), P50Duration: ms(300), P95Duration: ms(1000), MaxDuration: ms(1000)})},
		{"w1 after everything", "w1", 31, with(store.DeliveryStats{Pending: 1})},
		{"w2", "w2", 0, store.DeliveryStats{Delivered: 1, Attempts: 1, MeanDuration: ms(50), P50Duration: ms(50),
			P95Duration: ms(50), MaxDuration: ms(50), LastSuccess: at(10).UTC()}},
		{"unknown webhook", "nope", 0, store.DeliveryStats{}},
	}
	for _, tc := range cases {
		got, err := s.DeliveryStats(ctx, tc.webhook, at(tc.since))
		must(t, "DeliveryStats("+tc.name+")", err)
		if !sameStats(*got, tc.want) {
			t.Errorf("%s: DeliveryStats = %+v, want %+v", tc.name, *got, tc.want)
		}
	}
	ds := deliveries(ctx, t, s, "w1")
	if b := ds["b"]; b.LastDuration != ms(200) || b.LastStatus != 200 || b.Attempts != 2 {
		t.Errorf("delivery b = %+v, want its last attempt's 200 ms and status 200", b)
	}
}

// sameStats compares stats with the times by instant.
func sameStats(a, b store.DeliveryStats) bool {
	if !a.LastSuccess.Equal(b.LastSuccess) || !a.LastFailure.Equal(b.LastFailure) {
		return false
	}
	a.LastSuccess, a.LastFailure, b.LastSuccess, b.LastFailure = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

// testDeliveryStatsPruned: the attempts go with their deliveries, when
// the webhook is deleted and when the events are pruned.
func testDeliveryStatsPruned(ctx context.Context, t *testing.T, s store.Store) {
	runStatsScript(ctx, t, s)
	must(t, "DeleteWebhook", s.DeleteWebhook(ctx, "w2"))
	if _, err := s.DeleteEventsBefore(ctx, at(1)); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"w1", "w2"} {
		got, err := s.DeliveryStats(ctx, w, at(0))
		must(t, "DeliveryStats", err)
		if !sameStats(*got, store.DeliveryStats{}) {
			t.Errorf("%s after pruning: %+v, want nothing", w, *got)
		}
	}
}
