package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// minute is a whole UTC minute, as the usage sampler records.
func minute(n int) time.Time {
	return base.Truncate(time.Minute).UTC().Add(time.Duration(n) * time.Minute)
}

var usageTests = []test{
	{"NodesAddUp", func(ctx context.Context, t *testing.T, s store.Store) {
		// Two nodes' samples of one team's minute both count; a node
		// recording its minute again replaces only its own.
		must(t, "RecordUsage", s.RecordUsage(ctx, []store.UsageSample{
			{Team: "acme", Node: "a", At: minute(0), RunningSandboxes: 9, VCPUs: 9, MemoryMB: 9},
			{Team: "acme", Node: "b", At: minute(0), RunningSandboxes: 1, VCPUs: 2, MemoryMB: 256, CPUUsed: time.Second},
		}))
		must(t, "RecordUsage again", s.RecordUsage(ctx, []store.UsageSample{
			{Team: "acme", Node: "a", At: minute(0), RunningSandboxes: 2, VCPUs: 4, MemoryMB: 1024},
		}))
		got, err := s.UsageTotals(ctx, "acme", minute(0), minute(1))
		must(t, "UsageTotals", err)
		wantEqual(t, "UsageTotals", got, []store.UsageSample{
			{Team: "acme", At: minute(0), RunningSandboxes: 3, VCPUs: 6, MemoryMB: 1280, CPUUsed: time.Second},
		})
	}},
	{"TotalsByTeamAndAll", func(ctx context.Context, t *testing.T, s store.Store) {
		must(t, "RecordUsage", s.RecordUsage(ctx, []store.UsageSample{
			{Team: "acme", At: minute(0), RunningSandboxes: 2, VCPUs: 4, MemoryMB: 1024, CPUUsed: 1500 * time.Millisecond},
			{Team: "beta", At: minute(0), RunningSandboxes: 1, VCPUs: 2, MemoryMB: 512, CPUUsed: time.Second},
			{Team: "acme", At: minute(1), RunningSandboxes: 3, VCPUs: 6, MemoryMB: 1536, CPUUsed: 0},
			{Team: "acme", At: minute(5), RunningSandboxes: 1, VCPUs: 1, MemoryMB: 256, CPUUsed: time.Minute},
		}))
		got, err := s.UsageTotals(ctx, "acme", minute(0), minute(5))
		must(t, "UsageTotals acme", err)
		wantEqual(t, "UsageTotals acme", got, []store.UsageSample{
			{Team: "acme", At: minute(0), RunningSandboxes: 2, VCPUs: 4, MemoryMB: 1024, CPUUsed: 1500 * time.Millisecond},
			{Team: "acme", At: minute(1), RunningSandboxes: 3, VCPUs: 6, MemoryMB: 1536},
		})
		all, err := s.UsageTotals(ctx, "", minute(0), minute(1))
		must(t, "UsageTotals all", err)
		wantEqual(t, "UsageTotals all", all, []store.UsageSample{
			{At: minute(0), RunningSandboxes: 3, VCPUs: 6, MemoryMB: 1536, CPUUsed: 2500 * time.Millisecond},
		})
		none, err := s.UsageTotals(ctx, "nobody", minute(0), minute(10))
		must(t, "UsageTotals unknown team", err)
		if len(none) != 0 {
			t.Fatalf("UsageTotals of a team without samples = %+v, want none", none)
		}
	}},
	{"RecordReplacesMinute", func(ctx context.Context, t *testing.T, s store.Store) {
		must(t, "RecordUsage", s.RecordUsage(ctx, []store.UsageSample{{Team: "acme", At: minute(0), RunningSandboxes: 1}}))
		must(t, "RecordUsage again", s.RecordUsage(ctx, []store.UsageSample{{Team: "acme", At: minute(0), RunningSandboxes: 4}}))
		must(t, "RecordUsage none", s.RecordUsage(ctx, nil))
		got, err := s.UsageTotals(ctx, "acme", minute(-1), minute(1))
		must(t, "UsageTotals", err)
		if len(got) != 1 || got[0].RunningSandboxes != 4 {
			t.Fatalf("UsageTotals = %+v, want one minute with 4 sandboxes", got)
		}
	}},
	{"BoundsAndDelete", func(ctx context.Context, t *testing.T, s store.Store) {
		for i := range 4 {
			must(t, "RecordUsage", s.RecordUsage(ctx, []store.UsageSample{{Team: "acme", At: minute(i), RunningSandboxes: i + 1}}))
		}
		// A bound with a fraction of a second: minute(1) is after it.
		got, err := s.UsageTotals(ctx, "acme", minute(1).Add(-time.Millisecond), minute(3).Add(time.Millisecond))
		must(t, "UsageTotals", err)
		if len(got) != 3 || !got[0].At.Equal(minute(1)) || got[2].At.Location() != time.UTC {
			t.Fatalf("UsageTotals = %+v, want minutes 1 to 3 in UTC", got)
		}
		must(t, "DeleteUsageBefore", s.DeleteUsageBefore(ctx, minute(2)))
		got, err = s.UsageTotals(ctx, "", minute(-10), minute(10))
		must(t, "UsageTotals after delete", err)
		if len(got) != 2 || !got[0].At.Equal(minute(2)) {
			t.Fatalf("after DeleteUsageBefore(minute 2): %+v, want minutes 2 and 3", got)
		}
	}},
}
