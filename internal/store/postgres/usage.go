package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/store"
)

// RecordUsage implements store.Store. Each sample is an upsert, so two
// processes recording one node's minute of a team leave one sample.
func (s *Store) RecordUsage(ctx context.Context, samples []store.UsageSample) error {
	if len(samples) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, u := range samples {
		b.Queue(`INSERT INTO usage_samples (team_id, node, at, running_sandboxes, vcpus, memory_mb, cpu_used_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (team_id, node, at) DO UPDATE SET running_sandboxes = excluded.running_sandboxes,
			vcpus = excluded.vcpus, memory_mb = excluded.memory_mb, cpu_used_ms = excluded.cpu_used_ms`,
			store.TeamOf(u.Team), u.Node, u.At.Unix(), u.RunningSandboxes, u.VCPUs, u.MemoryMB, u.CPUUsed.Milliseconds())
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return fmt.Errorf("recording usage: %w", err)
		}
		return nil
	})
}

// UsageTotals implements store.Store.
func (s *Store) UsageTotals(ctx context.Context, team string, from, to time.Time) ([]store.UsageSample, error) {
	q := `SELECT at, SUM(running_sandboxes)::bigint, SUM(vcpus)::bigint, SUM(memory_mb)::bigint, SUM(cpu_used_ms)::bigint
		FROM usage_samples WHERE at >= $1 AND at < $2`
	args := []any{unixCeil(from), unixCeil(to)}
	if team != "" {
		q += ` AND team_id = $3`
		args = append(args, team)
	}
	rows, err := s.pool.Query(ctx, q+` GROUP BY at ORDER BY at`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.UsageSample, error) {
		u := store.UsageSample{Team: team}
		var at, cpuMS int64
		if err := row.Scan(&at, &u.RunningSandboxes, &u.VCPUs, &u.MemoryMB, &cpuMS); err != nil {
			return u, err
		}
		u.At, u.CPUUsed = time.Unix(at, 0).UTC(), time.Duration(cpuMS)*time.Millisecond
		return u, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	return out, nil
}

// DeleteUsageBefore implements store.Store.
func (s *Store) DeleteUsageBefore(ctx context.Context, cutoff time.Time) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM usage_samples WHERE at < $1`, unixCeil(cutoff)); err != nil {
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
