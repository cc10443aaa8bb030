package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectTeam = `SELECT id, max_sandboxes, max_memory_mb, max_cpus, max_builds FROM teams`

// GetTeam implements store.Store.
func (s *Store) GetTeam(ctx context.Context, id string) (*store.Team, error) {
	t, err := scanTeam(s.db.QueryRowContext(ctx, selectTeam+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("team %q: %w", id, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("getting team %q: %w", id, err)
	}
	return t, nil
}

// PutTeam implements store.Store.
func (s *Store) PutTeam(ctx context.Context, t *store.Team) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("team without id: %w", errdefs.ErrInvalidArgument)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO teams (id, max_sandboxes, max_memory_mb, max_cpus, max_builds)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET max_sandboxes = excluded.max_sandboxes,
		max_memory_mb = excluded.max_memory_mb, max_cpus = excluded.max_cpus, max_builds = excluded.max_builds`,
		t.ID, t.MaxSandboxes, t.MaxMemoryMB, t.MaxCPUs, t.MaxBuilds)
	if err != nil {
		return fmt.Errorf("putting team %q: %w", t.ID, err)
	}
	return nil
}

// ListTeams implements store.Store.
func (s *Store) ListTeams(ctx context.Context) ([]*store.Team, error) {
	rows, err := s.db.QueryContext(ctx, selectTeam+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("listing teams: %w", err)
	}
	defer rows.Close()
	var out []*store.Team
	for rows.Next() {
		t, err := scanTeam(rows)
		if err != nil {
			return nil, fmt.Errorf("listing teams: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func scanTeam(sc scanner) (*store.Team, error) {
	var t store.Team
	if err := sc.Scan(&t.ID, &t.MaxSandboxes, &t.MaxMemoryMB, &t.MaxCPUs, &t.MaxBuilds); err != nil {
		return nil, err
	}
	return &t, nil
}
