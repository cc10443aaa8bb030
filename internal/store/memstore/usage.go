package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// usageKey is one team's minute, in whole unix seconds as sqlite keeps it.
type usageKey struct {
	team, node string
	at         int64
}

// RecordUsage implements store.Store.
func (m *Store) RecordUsage(ctx context.Context, samples []store.UsageSample) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if m.usage == nil {
		m.usage = map[usageKey]store.UsageSample{}
	}
	for _, u := range samples {
		u.Team = store.TeamOf(u.Team)
		u.At = time.Unix(u.At.Unix(), 0).UTC()
		u.CPUUsed = u.CPUUsed.Truncate(time.Millisecond)
		m.usage[usageKey{u.Team, u.Node, u.At.Unix()}] = u
	}
	return nil
}

// UsageTotals implements store.Store.
func (m *Store) UsageTotals(ctx context.Context, team string, from, to time.Time) ([]store.UsageSample, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	byMinute := map[int64]*store.UsageSample{}
	for k, u := range m.usage {
		if (team != "" && k.team != team) || u.At.Before(from) || !u.At.Before(to) {
			continue
		}
		sum := byMinute[k.at]
		if sum == nil {
			sum = &store.UsageSample{Team: team, At: u.At}
			byMinute[k.at] = sum
		}
		sum.RunningSandboxes += u.RunningSandboxes
		sum.VCPUs += u.VCPUs
		sum.MemoryMB += u.MemoryMB
		sum.CPUUsed += u.CPUUsed
	}
	out := make([]store.UsageSample, 0, len(byMinute))
	for _, u := range byMinute {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b store.UsageSample) int { return a.At.Compare(b.At) })
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// DeleteUsageBefore implements store.Store.
func (m *Store) DeleteUsageBefore(ctx context.Context, cutoff time.Time) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	for k, u := range m.usage {
		if u.At.Before(cutoff) {
			delete(m.usage, k)
		}
	}
	return nil
}
