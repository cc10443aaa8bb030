// Package usage records each team's usage over time: once a minute, the
// running sandboxes the manager holds (count, vCPUs, reserved memory) and
// the CPU time they used, one row per team in the store, kept for a
// retention. GET /usage reads the rows back by step.
package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// DefaultRetention is how long samples are kept unless told otherwise
// (--usage-retention).
const DefaultRetention = 30 * 24 * time.Hour

// Source is what the recorder reads of the sandbox manager.
type Source interface {
	Census() []sandbox.Live
	TakeCPUUsed() map[string]time.Duration
}

// Clock is the time the recorder runs on; tests drive a fake one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Recorder samples a Source into a store.
type Recorder struct {
	src       Source
	st        store.UsageStore
	retention time.Duration
	clock     Clock
	node      string // stamped on every sample (OnNode)
}

// OnNode makes r stamp node on its samples: in a cluster each node
// records its own sandboxes, and one node's sample must not replace
// another's of the same team and minute.
func (r *Recorder) OnNode(node string) *Recorder {
	r.node = node
	return r
}

// New returns a recorder keeping samples for retention (0: forever); a
// nil clock is the real one.
func New(src Source, st store.UsageStore, retention time.Duration, clock Clock) *Recorder {
	if clock == nil {
		clock = realClock{}
	}
	return &Recorder{src: src, st: st, retention: retention, clock: clock}
}

// Run records a sample at each minute boundary until ctx ends. A failed
// minute is logged and skipped: the next one is a sample of its own.
func (r *Recorder) Run(ctx context.Context) {
	for {
		now := r.clock.Now()
		next := now.Truncate(time.Minute).Add(time.Minute)
		select {
		case <-ctx.Done():
			return
		case <-r.clock.After(next.Sub(now)):
		}
		if err := r.Record(ctx, next); err != nil {
			log.G(ctx).Warn("recording usage", "err", err)
		}
	}
}

// Record stores every team's totals at the minute of now and removes the
// samples past the retention.
func (r *Recorder) Record(ctx context.Context, now time.Time) error {
	at := now.UTC().Truncate(time.Minute)
	byTeam := map[string]*store.UsageSample{}
	team := func(id string) *store.UsageSample {
		u := byTeam[id]
		if u == nil {
			u = &store.UsageSample{Team: id, Node: r.node, At: at}
			byTeam[id] = u
		}
		return u
	}
	for _, l := range r.src.Census() {
		if !l.Running {
			continue // a paused sandbox holds no CPU or memory
		}
		u := team(l.Team)
		u.RunningSandboxes++
		u.VCPUs += l.CPUCount
		u.MemoryMB += int64(l.MemoryMB)
	}
	for id, d := range r.src.TakeCPUUsed() {
		team(id).CPUUsed += d
	}
	samples := make([]store.UsageSample, 0, len(byTeam))
	for _, u := range byTeam {
		samples = append(samples, *u)
	}
	if err := r.st.RecordUsage(ctx, samples); err != nil {
		return fmt.Errorf("storing the usage of %s: %w", at.Format(time.RFC3339), err)
	}
	if r.retention > 0 {
		if err := r.st.DeleteUsageBefore(ctx, at.Add(-r.retention)); err != nil {
			return fmt.Errorf("removing usage older than %s: %w", r.retention, err)
		}
	}
	return nil
}
