package sqlstore

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectTeam = `SELECT id, max_sandboxes, max_memory_mb, max_cpus, max_builds, max_volume_mb FROM teams`

// GetTeam implements store.Store.
func (s *Store) GetTeam(ctx context.Context, id string) (*store.Team, error) {
	return getOne(s.db.QueryRow(ctx, selectTeam+` WHERE id = ?`, id), fmt.Sprintf("team %q", id), scanTeam)
}

// PutTeam implements store.Store: one upsert, so concurrent puts of a team
// never collide on the insert.
func (s *Store) PutTeam(ctx context.Context, t *store.Team) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("team without id: %w", errdefs.ErrInvalidArgument)
	}
	_, err := s.db.Exec(ctx, `INSERT INTO teams (id, max_sandboxes, max_memory_mb, max_cpus, max_builds, max_volume_mb)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET max_sandboxes = excluded.max_sandboxes,
		max_memory_mb = excluded.max_memory_mb, max_cpus = excluded.max_cpus, max_builds = excluded.max_builds,
		max_volume_mb = excluded.max_volume_mb`,
		t.ID, t.MaxSandboxes, t.MaxMemoryMB, t.MaxCPUs, t.MaxBuilds, t.MaxVolumeMB)
	if err != nil {
		return fmt.Errorf("putting team %q: %w", t.ID, err)
	}
	return nil
}

// ListTeams implements store.Store.
func (s *Store) ListTeams(ctx context.Context) ([]*store.Team, error) {
	rows, err := s.db.Query(ctx, selectTeam+` ORDER BY id`)
	return collect(rows, err, "listing teams", scanTeam)
}

func scanTeam(row Row) (*store.Team, error) {
	var t store.Team
	if err := row.Scan(&t.ID, &t.MaxSandboxes, &t.MaxMemoryMB, &t.MaxCPUs, &t.MaxBuilds, &t.MaxVolumeMB); err != nil {
		return nil, err
	}
	return &t, nil
}
