// Package storetest is the conformance suite for store.Store. Every
// implementation runs it from its own tests:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
//	}
//
// The suite pins the behaviour the layers above rely on and that the
// interface can't express: error classes, list order, alias rules, copy
// semantics, and the shape records come back in (times in UTC, empty maps,
// slices and Network as nil).
package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// Run runs the suite. open must return a new, empty store each time it is
// called; subtests run in parallel, each on its own store, and Run closes
// each store when its subtest ends.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	groups := []struct {
		name  string
		tests []test
	}{
		{"Sandbox", sandboxTests},
		{"Template", templateTests},
		{"Build", buildTests},
		{"Tag", tagTests},
		{"APIKey", apiKeyTests},
		{"Snapshot", snapshotTests},
		{"Team", teamTests},
		{"Usage", usageTests},
		{"Event", eventTests},
		{"Webhook", webhookTests},
		{"Claim", claimTests},
		{"DeliveryStats", statsTests},
		{"Node", nodeTests},
		{"Park", parkTests},
		{"Concurrent", concurrentTests},
		{"Race", raceTests},
		{"Idempotency", idempotencyTests},
		{"Volume", volumeTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range g.tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					s := open(t)
					t.Cleanup(func() {
						if err := s.Close(); err != nil {
							t.Errorf("Close: %v", err)
						}
					})
					tt.fn(t.Context(), t, s)
				})
			}
		})
	}
}

// test is one named case of the suite.
type test struct {
	name string
	fn   func(ctx context.Context, t *testing.T, s store.Store)
}

// base is a fixed instant with a nanosecond part, in a zone other than UTC,
// so the suite checks that stores keep full precision and return UTC.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("UTC+2", 2*3600))

// at returns base plus d minutes.
func at(d int) time.Time { return base.Add(time.Duration(d) * time.Minute) }

// wantErr fails t unless err is of class (nil meaning success).
func wantErr(t *testing.T, op string, err, class error) {
	t.Helper()
	switch {
	case class == nil && err != nil:
		t.Fatalf("%s: unexpected error: %v", op, err)
	case class != nil && !errors.Is(err, class):
		t.Fatalf("%s: got error %v, want one of class %q", op, err, class)
	}
}

// must fails t on err.
func must(t *testing.T, op string, err error) {
	t.Helper()
	wantErr(t, op, err, nil)
}

// wantEqual compares records deeply; times must match to the nanosecond and
// be in UTC, since that is what the stores promise.
func wantEqual[T any](t *testing.T, op string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %+v\n want %+v", op, deref(got), deref(want))
	}
}

// deref makes %+v print the record a pointer points at.
func deref(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return v
}

// ids returns the ID field of each record, for order checks.
func ids[T any](recs []*T) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = reflect.ValueOf(r).Elem().FieldByName("ID").String()
	}
	return out
}
