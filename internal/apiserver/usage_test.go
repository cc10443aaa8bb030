package apiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/store"
)

// TestUsageSeries: minute samples become one point per step, the counts
// the step's peak and the CPU time its sum, for the key's team, or for
// every team (or the one named) with the admin key.
func TestUsageSeries(t *testing.T) {
	t.Parallel()
	f := newRouteFixture(t)
	admin := f.addKey(t, apikey.Spec{Name: "admin", Admin: true})
	t0 := time.Unix(1_800_000_000, 0).UTC().Truncate(time.Hour)
	minuteN := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	err := f.st.RecordUsage(t.Context(), []store.UsageSample{
		{Team: "default", At: minuteN(0), RunningSandboxes: 1, VCPUs: 2, MemoryMB: 512, CPUUsed: 30 * time.Second},
		{Team: "default", At: minuteN(1), RunningSandboxes: 3, VCPUs: 6, MemoryMB: 1536, CPUUsed: 90 * time.Second},
		{Team: "default", At: minuteN(7), RunningSandboxes: 1, VCPUs: 1, MemoryMB: 256, CPUUsed: time.Second},
		{Team: "acme", At: minuteN(1), RunningSandboxes: 5, VCPUs: 5, MemoryMB: 5000, CPUUsed: time.Minute},
		{Team: "default", At: minuteN(20), RunningSandboxes: 9}, // past end
	})
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		running, vcpus int
		mem            int64
		cpu            float64
	}
	tests := []struct {
		name, key, query string
		want             []point
	}{
		{"own team", f.key, "", []point{{3, 6, 1536, 120}, {1, 1, 256, 1}}},
		{"admin: every team", admin, "", []point{{8, 11, 6536, 180}, {1, 1, 256, 1}}}, // minute 1: 3+5 running
		{"admin: one team", admin, "&team=acme", []point{{5, 5, 5000, 60}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fmt.Sprintf("/usage?start=%d&end=%d&step=300%s", t0.Unix(), minuteN(10).Unix(), tt.query)
			resp := do(t, f.srv, "GET", path, "", tt.key)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var got rest.UsageSeries
			if resp.StatusCode != 200 || json.Unmarshal(raw, &got) != nil {
				t.Fatalf("GET %s = %d %s", path, resp.StatusCode, raw)
			}
			if got.Step != 300 || len(got.Points) != len(tt.want) {
				t.Fatalf("step %d, %d points, want 300 and %d: %s", got.Step, len(got.Points), len(tt.want), raw)
			}
			for i, w := range tt.want {
				p := got.Points[i]
				if g := (point{p.RunningSandboxes, p.Vcpus, p.MemoryMB, p.CPUUsedSeconds}); g != w {
					t.Errorf("point %d = %+v, want %+v", i, g, w)
				}
				if at := minuteN(5 * i); !p.Timestamp.Equal(at) || p.TimestampUnix != at.Unix() {
					t.Errorf("point %d at %s, want %s", i, p.Timestamp, at)
				}
			}
		})
	}
}
