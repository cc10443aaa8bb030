package sqlstore

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectVolume = `SELECT id, team_id, name, token, size_mb, created_at FROM volumes`

// CreateVolume implements store.Store. The unique index on (team_id, name)
// keeps names unique per team even between concurrent creates in several
// processes.
func (s *Store) CreateVolume(ctx context.Context, v *store.Volume) error {
	if v == nil || v.ID == "" || v.Name == "" {
		return fmt.Errorf("volume without id or name: %w", errdefs.ErrInvalidArgument)
	}
	e := s.enc()
	created := e.time(v.CreatedAt)
	if e.err != nil {
		return fmt.Errorf("creating volume %q: %w", v.Name, e.err)
	}
	_, err := s.db.Exec(ctx, `INSERT INTO volumes (id, team_id, name, token, size_mb, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, v.ID, v.TeamID, v.Name, v.Token, v.SizeMB, created)
	if s.d.IsUniqueViolation(err) {
		return fmt.Errorf("creating volume %q: a volume of that name or id exists: %w", v.Name, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("creating volume %q: %w", v.Name, err)
	}
	return nil
}

// GetVolume implements store.Store.
func (s *Store) GetVolume(ctx context.Context, id string) (*store.Volume, error) {
	row := s.db.QueryRow(ctx, selectVolume+` WHERE id = ?`, id)
	return getOne(row, fmt.Sprintf("volume %q", id), scanVolume)
}

// GetVolumeByName implements store.Store.
func (s *Store) GetVolumeByName(ctx context.Context, teamID, name string) (*store.Volume, error) {
	row := s.db.QueryRow(ctx, selectVolume+` WHERE team_id = ? AND name = ?`, teamID, name)
	return getOne(row, fmt.Sprintf("volume %q", name), scanVolume)
}

// ListVolumes implements store.Store.
func (s *Store) ListVolumes(ctx context.Context, teamID string) ([]*store.Volume, error) {
	if teamID == "" {
		rows, err := s.db.Query(ctx, selectVolume+` ORDER BY team_id, name`)
		return collect(rows, err, "listing volumes", scanVolume)
	}
	rows, err := s.db.Query(ctx, selectVolume+` WHERE team_id = ? ORDER BY name`, teamID)
	return collect(rows, err, "listing volumes of team "+teamID, scanVolume)
}

// DeleteVolume implements store.Store.
func (s *Store) DeleteVolume(ctx context.Context, id string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM volumes WHERE id = ?`, id)
	return affected(n, err, fmt.Sprintf("deleting volume %q", id))
}

func scanVolume(row Row) (*store.Volume, error) {
	var (
		v       store.Volume
		created timeCol
	)
	if err := row.Scan(&v.ID, &v.TeamID, &v.Name, &v.Token, &v.SizeMB, &created); err != nil {
		return nil, err
	}
	v.CreatedAt = created.t
	return &v, nil
}
