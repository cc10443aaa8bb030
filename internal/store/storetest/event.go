package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

var eventTests = []test{
	{"RoundTrip", testEventRoundTrip},
	{"ListFilterOrderPage", testEventList},
	{"DeleteBefore", testEventDeleteBefore},
	{"DuplicateID", testEventDuplicate},
}

// event returns an event of sandbox sb at minute m.
func event(id, sb, team, typ string, m int) *store.Event {
	return &store.Event{ID: id, Type: typ, SandboxID: sb, TemplateID: "base", BuildID: "b1",
		ExecutionID: "x-" + sb, TeamID: team, Timestamp: at(m)}
}

func testEventRoundTrip(ctx context.Context, t *testing.T, s store.Store) {
	e := event("e1", "sb1", "t1", store.EventUpdated, 0)
	e.Data = []byte(`{"set_timeout":"2025-03-14T13:19:26Z"}`)
	must(t, "CreateEvent", s.CreateEvent(ctx, e, nil))
	got, err := s.GetEvent(ctx, "e1")
	must(t, "GetEvent", err)
	want := *e
	want.Timestamp = e.Timestamp.UTC()
	wantEqual(t, "GetEvent", got, &want)
	e2 := event("e2", "sb1", "t1", store.EventCreated, 1) // no data: nil, not "null"
	must(t, "CreateEvent", s.CreateEvent(ctx, e2, nil))
	got, err = s.GetEvent(ctx, "e2")
	must(t, "GetEvent", err)
	if got.Data != nil {
		t.Fatalf("Data of an event without data = %q, want nil", got.Data)
	}
	_, err = s.GetEvent(ctx, "nope")
	wantErr(t, "GetEvent(unknown)", err, errdefs.ErrNotFound)
}

func testEventList(ctx context.Context, t *testing.T, s store.Store) {
	for i, e := range []*store.Event{
		event("a", "sb1", "t1", store.EventCreated, 0),
		event("b", "sb1", "t1", store.EventPaused, 1),
		event("c", "sb2", "t2", store.EventCreated, 2),
		event("d", "sb1", "t1", store.EventResumed, 3),
		event("e", "sb1", "t1", store.EventKilled, 4),
	} {
		must(t, fmt.Sprint("CreateEvent ", i), s.CreateEvent(ctx, e, nil))
	}
	for _, c := range []struct {
		name string
		q    store.EventQuery
		want []string
	}{
		{"all, newest first", store.EventQuery{}, []string{"e", "d", "c", "b", "a"}},
		{"ascending", store.EventQuery{Asc: true}, []string{"a", "b", "c", "d", "e"}},
		{"team", store.EventQuery{TeamID: "t1"}, []string{"e", "d", "b", "a"}},
		{"sandbox", store.EventQuery{SandboxID: "sb2"}, []string{"c"}},
		{"types", store.EventQuery{Types: []string{store.EventCreated, store.EventKilled}}, []string{"e", "c", "a"}},
		{"page", store.EventQuery{TeamID: "t1", Offset: 1, Limit: 2}, []string{"d", "b"}},
		{"past the end", store.EventQuery{Offset: 9}, []string{}},
	} {
		got, err := s.ListEvents(ctx, c.q)
		must(t, "ListEvents "+c.name, err)
		if g := ids(got); !slices.Equal(g, c.want) {
			t.Errorf("ListEvents %s = %v, want %v", c.name, g, c.want)
		}
	}
}

func testEventDeleteBefore(ctx context.Context, t *testing.T, s store.Store) {
	must(t, "CreateWebhook", s.CreateWebhook(ctx, webhook("w1", "t1", 0)))
	for i := range 3 {
		id := fmt.Sprint("e", i)
		d := delivery("d"+id, "w1", id, i)
		must(t, "CreateEvent", s.CreateEvent(ctx, event(id, "sb1", "t1", store.EventCreated, i), []*store.Delivery{d}))
	}
	n, err := s.DeleteEventsBefore(ctx, at(2))
	must(t, "DeleteEventsBefore", err)
	if n != 2 {
		t.Fatalf("DeleteEventsBefore removed %d events, want 2", n)
	}
	left, err := s.ListEvents(ctx, store.EventQuery{})
	must(t, "ListEvents", err)
	if g := ids(left); !slices.Equal(g, []string{"e2"}) {
		t.Fatalf("events left %v, want [e2]", g)
	}
	ds, err := s.ListDeliveries(ctx, "w1", 0)
	must(t, "ListDeliveries", err)
	if g := ids(ds); !slices.Equal(g, []string{"de2"}) {
		t.Fatalf("deliveries left %v, want those of the event kept", g)
	}
}

func testEventDuplicate(ctx context.Context, t *testing.T, s store.Store) {
	must(t, "CreateEvent", s.CreateEvent(ctx, event("e1", "sb1", "t1", store.EventCreated, 0), nil))
	err := s.CreateEvent(ctx, event("e1", "sb1", "t1", store.EventCreated, 1), nil)
	wantErr(t, "CreateEvent(same id)", err, errdefs.ErrAlreadyExists)
	// A delivery to a webhook that does not exist fails the whole event.
	err = s.CreateEvent(ctx, event("e2", "sb1", "t1", store.EventCreated, 2), []*store.Delivery{delivery("d", "nope", "e2", 2)})
	wantErr(t, "CreateEvent(unknown webhook)", err, errdefs.ErrNotFound)
	if _, err := s.GetEvent(ctx, "e2"); !errdefs.IsNotFound(err) {
		t.Fatalf("an event whose deliveries failed was stored: %v", err)
	}
}
