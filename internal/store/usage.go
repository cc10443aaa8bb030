package store

import (
	"context"
	"time"
)

// UsageStore keeps each team's usage over time: one sample per team and
// minute, written by the server's usage sampler and read by GET /usage.
type UsageStore interface {
	// RecordUsage stores samples, replacing any sample of the same team,
	// node and minute (a sampler that retries a minute does not count
	// twice; two nodes' samples of one minute both count).
	RecordUsage(ctx context.Context, samples []UsageSample) error
	// UsageTotals returns, for each minute in [from, to) that has samples,
	// the sum of team's samples (every team's when team is "") over every
	// node, oldest first, with Team set to team and Node "".
	UsageTotals(ctx context.Context, team string, from, to time.Time) ([]UsageSample, error)
	// DeleteUsageBefore removes the samples older than cutoff.
	DeleteUsageBefore(ctx context.Context, cutoff time.Time) error
}

// UsageSample is what one team had running at one minute.
type UsageSample struct {
	Team string
	// Node is the cluster node that sampled it ("" in one-machine mode).
	Node string
	// At is the minute, truncated to it, in UTC; stores keep whole seconds.
	At               time.Time
	RunningSandboxes int
	VCPUs            int
	MemoryMB         int64 // reserved by the running sandboxes
	// CPUUsed is the CPU time the team's sandboxes used since the
	// previous sample, to the millisecond.
	CPUUsed time.Duration
}
