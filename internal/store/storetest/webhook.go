package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

var webhookTests = []test{
	{"RoundTrip", testWebhookRoundTrip},
	{"UpdateDelete", testWebhookUpdateDelete},
	{"Deliveries", testDeliveries},
}

func webhook(id, team string, m int) *store.Webhook {
	return &store.Webhook{ID: id, TeamID: team, Name: "hook " + id, URL: "https://example.test/" + id, Enabled: true,
		Events: []string{store.EventCreated, store.EventKilled}, Secret: "s3cret", CreatedAt: at(m), UpdatedAt: at(m)}
}

func delivery(id, webhookID, eventID string, m int) *store.Delivery {
	return &store.Delivery{ID: id, WebhookID: webhookID, EventID: eventID, EventType: store.EventCreated,
		Status: store.DeliveryPending, NextAttempt: at(m), CreatedAt: at(m), UpdatedAt: at(m)}
}

// utcWebhook is w as a store returns it.
func utcWebhook(w *store.Webhook) *store.Webhook {
	c := *w
	c.CreatedAt, c.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	return &c
}

func testWebhookRoundTrip(ctx context.Context, t *testing.T, s store.Store) {
	w := webhook("w1", "t1", 0)
	must(t, "CreateWebhook", s.CreateWebhook(ctx, w))
	wantErr(t, "CreateWebhook(same id)", s.CreateWebhook(ctx, webhook("w1", "t2", 1)), errdefs.ErrAlreadyExists)
	got, err := s.GetWebhook(ctx, "w1")
	must(t, "GetWebhook", err)
	wantEqual(t, "GetWebhook", got, utcWebhook(w))
	got.Events[0] = "changed" // a copy: the store keeps its own
	again, _ := s.GetWebhook(ctx, "w1")
	wantEqual(t, "GetWebhook after changing a copy", again, utcWebhook(w))
	must(t, "CreateWebhook", s.CreateWebhook(ctx, webhook("w0", "t2", 1)))
	all, err := s.ListWebhooks(ctx)
	must(t, "ListWebhooks", err)
	if g := ids(all); !slices.Equal(g, []string{"w1", "w0"}) {
		t.Fatalf("ListWebhooks = %v, want oldest first", g)
	}
	_, err = s.GetWebhook(ctx, "nope")
	wantErr(t, "GetWebhook(unknown)", err, errdefs.ErrNotFound)
}

func testWebhookUpdateDelete(ctx context.Context, t *testing.T, s store.Store) {
	w := webhook("w1", "t1", 0)
	must(t, "CreateWebhook", s.CreateWebhook(ctx, w))
	w.Enabled, w.URL, w.Events, w.UpdatedAt = false, "http://example.test/new", []string{store.EventPaused}, at(5)
	must(t, "UpdateWebhook", s.UpdateWebhook(ctx, w))
	got, err := s.GetWebhook(ctx, "w1")
	must(t, "GetWebhook", err)
	wantEqual(t, "GetWebhook after update", got, utcWebhook(w))
	wantErr(t, "UpdateWebhook(unknown)", s.UpdateWebhook(ctx, webhook("nope", "t1", 0)), errdefs.ErrNotFound)
	must(t, "CreateEvent", s.CreateEvent(ctx, event("e1", "sb", "t1", store.EventPaused, 1),
		[]*store.Delivery{delivery("d1", "w1", "e1", 1)}))
	must(t, "DeleteWebhook", s.DeleteWebhook(ctx, "w1"))
	wantErr(t, "DeleteWebhook(again)", s.DeleteWebhook(ctx, "w1"), errdefs.ErrNotFound)
	pending, err := s.PendingDeliveries(ctx, 0)
	must(t, "PendingDeliveries", err)
	if len(pending) != 0 {
		t.Fatalf("deliveries of a deleted webhook remain: %v", ids(pending))
	}
	if _, err := s.GetEvent(ctx, "e1"); err != nil {
		t.Fatalf("deleting a webhook removed its event: %v", err)
	}
}

func testDeliveries(ctx context.Context, t *testing.T, s store.Store) {
	must(t, "CreateWebhook", s.CreateWebhook(ctx, webhook("w1", "t1", 0)))
	must(t, "CreateWebhook", s.CreateWebhook(ctx, webhook("w2", "t1", 0)))
	must(t, "CreateEvent", s.CreateEvent(ctx, event("e1", "sb", "t1", store.EventCreated, 1),
		[]*store.Delivery{delivery("d1", "w1", "e1", 1), delivery("d2", "w2", "e1", 1)}))
	must(t, "CreateEvent", s.CreateEvent(ctx, event("e2", "sb", "t1", store.EventKilled, 2),
		[]*store.Delivery{delivery("d3", "w1", "e2", 2)}))
	// d1 failed once and waits: d3, due earlier, comes first.
	d1 := delivery("d1", "w1", "e1", 1)
	d1.Attempts, d1.LastStatus, d1.LastError, d1.NextAttempt, d1.UpdatedAt = 1, 500, "HTTP 500", at(10), at(1).Add(time.Second)
	must(t, "UpdateDelivery", s.UpdateDelivery(ctx, d1))
	d2 := delivery("d2", "w2", "e1", 1)
	d2.Status, d2.Attempts, d2.LastStatus, d2.NextAttempt = store.DeliveryDelivered, 1, 204, time.Time{}
	must(t, "UpdateDelivery", s.UpdateDelivery(ctx, d2))
	wantErr(t, "UpdateDelivery(unknown)", s.UpdateDelivery(ctx, delivery("nope", "w1", "e1", 0)), errdefs.ErrNotFound)
	pending, err := s.PendingDeliveries(ctx, 0)
	must(t, "PendingDeliveries", err)
	if g := ids(pending); !slices.Equal(g, []string{"d3", "d1"}) {
		t.Fatalf("PendingDeliveries = %v, want [d3 d1]", g)
	}
	want := *d1
	want.NextAttempt, want.CreatedAt, want.UpdatedAt = d1.NextAttempt.UTC(), d1.CreatedAt.UTC(), d1.UpdatedAt.UTC()
	wantEqual(t, "pending d1", pending[1], &want)
	mine, err := s.ListDeliveries(ctx, "w1", 1)
	must(t, "ListDeliveries", err)
	if g := ids(mine); !slices.Equal(g, []string{"d3"}) {
		t.Fatalf("ListDeliveries(w1, 1) = %v, want the newest, d3", g)
	}
	done, err := s.ListDeliveries(ctx, "w2", 0)
	must(t, "ListDeliveries", err)
	if len(done) != 1 || !done[0].NextAttempt.IsZero() || done[0].Status != store.DeliveryDelivered {
		t.Fatalf("delivered d2 = %+v, want delivered with no next attempt", done)
	}
}
