package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// Usage samples are kept at whole unix seconds in both databases.
const upsertUsage = `INSERT INTO usage_samples (team_id, node, at, running_sandboxes, vcpus, memory_mb, cpu_used_ms)
	VALUES (?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (team_id, node, at) DO UPDATE SET running_sandboxes = excluded.running_sandboxes,
	vcpus = excluded.vcpus, memory_mb = excluded.memory_mb, cpu_used_ms = excluded.cpu_used_ms`

// RecordUsage implements store.Store. Each sample is an upsert, so two
// processes recording one node's minute of a team leave one sample; the
// samples of one call are written in one transaction.
func (s *Store) RecordUsage(ctx context.Context, samples []store.UsageSample) error {
	if len(samples) == 0 {
		return nil
	}
	return s.db.InTx(ctx, func(tx Conn) error {
		for _, u := range samples {
			_, err := tx.Exec(ctx, upsertUsage, store.TeamOf(u.Team), u.Node, u.At.Unix(),
				u.RunningSandboxes, u.VCPUs, u.MemoryMB, u.CPUUsed.Milliseconds())
			if err != nil {
				return fmt.Errorf("recording usage: %w", err)
			}
		}
		return nil
	})
}

// UsageTotals implements store.Store.
func (s *Store) UsageTotals(ctx context.Context, team string, from, to time.Time) ([]store.UsageSample, error) {
	q := `SELECT at, CAST(SUM(running_sandboxes) AS BIGINT), CAST(SUM(vcpus) AS BIGINT),
		CAST(SUM(memory_mb) AS BIGINT), CAST(SUM(cpu_used_ms) AS BIGINT)
		FROM usage_samples WHERE at >= ? AND at < ?`
	args := []any{unixCeil(from), unixCeil(to)}
	if team != "" {
		q += ` AND team_id = ?`
		args = append(args, team)
	}
	rows, err := s.db.Query(ctx, q+` GROUP BY at ORDER BY at`, args...)
	out, err := collect(rows, err, "reading usage", func(row Row) (*store.UsageSample, error) {
		u := store.UsageSample{Team: team}
		var at, cpuMS int64
		if err := row.Scan(&at, &u.RunningSandboxes, &u.VCPUs, &u.MemoryMB, &cpuMS); err != nil {
			return nil, err
		}
		u.At, u.CPUUsed = time.Unix(at, 0).UTC(), time.Duration(cpuMS)*time.Millisecond
		return &u, nil
	})
	if err != nil || len(out) == 0 {
		return nil, err
	}
	samples := make([]store.UsageSample, len(out))
	for i, u := range out {
		samples[i] = *u
	}
	return samples, nil
}

// DeleteUsageBefore implements store.Store.
func (s *Store) DeleteUsageBefore(ctx context.Context, cutoff time.Time) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM usage_samples WHERE at < ?`, unixCeil(cutoff)); err != nil {
		return fmt.Errorf("deleting old usage: %w", err)
	}
	return nil
}

// unixCeil is t in whole unix seconds, rounded up, so a bound with a
// fraction compares with stored whole seconds as the instant itself does.
func unixCeil(t time.Time) int64 {
	u := t.Unix()
	if t.Nanosecond() > 0 {
		u++
	}
	return u
}
