package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// RecordUsage implements store.Store.
func (s *Store) RecordUsage(ctx context.Context, samples []store.UsageSample) error {
	if len(samples) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO usage_samples
			(team_id, node, at, running_sandboxes, vcpus, memory_mb, cpu_used_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (team_id, node, at) DO UPDATE SET running_sandboxes = excluded.running_sandboxes,
			vcpus = excluded.vcpus, memory_mb = excluded.memory_mb, cpu_used_ms = excluded.cpu_used_ms`)
		if err != nil {
			return fmt.Errorf("recording usage: %w", err)
		}
		defer stmt.Close()
		for _, u := range samples {
			_, err := stmt.ExecContext(ctx, store.TeamOf(u.Team), u.Node, u.At.Unix(), u.RunningSandboxes, u.VCPUs,
				u.MemoryMB, u.CPUUsed.Milliseconds())
			if err != nil {
				return fmt.Errorf("recording usage of team %q: %w", u.Team, err)
			}
		}
		return nil
	})
}

// UsageTotals implements store.Store.
func (s *Store) UsageTotals(ctx context.Context, team string, from, to time.Time) ([]store.UsageSample, error) {
	q := `SELECT at, SUM(running_sandboxes), SUM(vcpus), SUM(memory_mb), SUM(cpu_used_ms)
		FROM usage_samples WHERE at >= ? AND at < ?`
	args := []any{unixCeil(from), unixCeil(to)}
	if team != "" {
		q += ` AND team_id = ?`
		args = append(args, team)
	}
	rows, err := s.db.QueryContext(ctx, q+` GROUP BY at ORDER BY at`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	defer rows.Close()
	var out []store.UsageSample
	for rows.Next() {
		u := store.UsageSample{Team: team}
		var at, cpuMS int64
		if err := rows.Scan(&at, &u.RunningSandboxes, &u.VCPUs, &u.MemoryMB, &cpuMS); err != nil {
			return nil, fmt.Errorf("reading usage: %w", err)
		}
		u.At, u.CPUUsed = time.Unix(at, 0).UTC(), time.Duration(cpuMS)*time.Millisecond
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	return out, nil
}

// DeleteUsageBefore implements store.Store.
func (s *Store) DeleteUsageBefore(ctx context.Context, cutoff time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM usage_samples WHERE at < ?`, unixCeil(cutoff)); err != nil {
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
