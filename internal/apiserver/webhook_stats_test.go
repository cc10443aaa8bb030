package apiserver

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// TestDeliveryStatsJSON: the stats' JSON says what happened and leaves
// out what did not (no rate without settled deliveries, no durations
// without attempts, no last failure without one).
func TestDeliveryStatsJSON(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	cases := []struct {
		name string
		st   store.DeliveryStats
		want string
	}{
		{"nothing yet", store.DeliveryStats{Pending: 2},
			`{"attempts":0,"delivered":0,"failed":0,"failedAttempts":0,"pending":2,"since":"2026-11-27T10:00:00Z","windowSeconds":86400}`},
		{"healthy and failing", store.DeliveryStats{Delivered: 3, Failed: 1, Attempts: 6, FailedAttempts: 3,
			MeanDuration: ms(40), P50Duration: ms(20), P95Duration: ms(150), MaxDuration: ms(150),
			LastSuccess: since.Add(time.Hour), LastFailure: since.Add(2 * time.Hour), LastFailureStatus: 503, LastError: "the receiver answered 503"},
			`{"attempts":6,"delivered":3,"durationMs":{"max":150,"mean":40,"p50":20,"p95":150},"failed":1,"failedAttempts":3,` +
				`"lastError":"the receiver answered 503","lastFailureAt":"2026-11-27T12:00:00Z","lastFailureStatusCode":503,` +
				`"lastSuccessAt":"2026-11-27T11:00:00Z","pending":0,"since":"2026-11-27T10:00:00Z","successRate":0.75,"windowSeconds":86400}`},
		{"no answer", store.DeliveryStats{Failed: 1, Attempts: 1, FailedAttempts: 1, MeanDuration: time.Second,
			P50Duration: time.Second, P95Duration: time.Second, MaxDuration: time.Second, LastFailure: since, LastError: "no answer within 1s"},
			`{"attempts":1,"delivered":0,"durationMs":{"max":1000,"mean":1000,"p50":1000,"p95":1000},"failed":1,"failedAttempts":1,` +
				`"lastError":"no answer within 1s","lastFailureAt":"2026-11-27T10:00:00Z","pending":0,"since":"2026-11-27T10:00:00Z","successRate":0,"windowSeconds":86400}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(toStatsJSON(&tc.st, 24*time.Hour, since))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}
