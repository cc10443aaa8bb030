package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// CreateSnapshot implements store.Store.
func (s *Store) CreateSnapshot(ctx context.Context, snap *store.Snapshot) error {
	if snap.ID == "" {
		return fmt.Errorf("snapshot without id: %w", errdefs.ErrInvalidArgument)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM snapshot_names WHERE name = ?`, snap.ID).Scan(&one)
		if err == nil {
			return fmt.Errorf("snapshot id %q is another snapshot's name: %w", snap.ID, errdefs.ErrAlreadyExists)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("checking snapshot id: %w", err)
		}
		for _, n := range snap.Names {
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM snapshots WHERE id = ?`, n).Scan(&one)
			if err == nil {
				return fmt.Errorf("snapshot name %q is another snapshot's id: %w", n, errdefs.ErrAlreadyExists)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("checking snapshot name: %w", err)
			}
		}
		data, err := json.Marshal(snap)
		if err != nil {
			return fmt.Errorf("encoding snapshot: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO snapshots (id, created_at, data) VALUES (?, ?, ?)`,
			snap.ID, formatTime(snap.CreatedAt), string(data))
		if isUniqueViolation(err) {
			return fmt.Errorf("snapshot %q: %w", snap.ID, errdefs.ErrAlreadyExists)
		}
		if err != nil {
			return fmt.Errorf("creating snapshot: %w", err)
		}
		for _, n := range snap.Names {
			_, err := tx.ExecContext(ctx, `INSERT INTO snapshot_names (name, snapshot_id) VALUES (?, ?)
				ON CONFLICT (name) DO UPDATE SET snapshot_id = excluded.snapshot_id`, n, snap.ID)
			if err != nil {
				return fmt.Errorf("naming snapshot %q: %w", n, err)
			}
		}
		return nil
	})
}

// selectSnapshot reads a record with its current names (a name may have
// moved to a newer snapshot since this one was written).
const selectSnapshot = `SELECT s.data,
	(SELECT json_group_array(n.name ORDER BY n.name) FROM snapshot_names n WHERE n.snapshot_id = s.id)
FROM snapshots s`

// GetSnapshot implements store.Store.
func (s *Store) GetSnapshot(ctx context.Context, idOrName string) (*store.Snapshot, error) {
	row := s.db.QueryRowContext(ctx, selectSnapshot+` WHERE s.id = ?
		OR s.id = (SELECT snapshot_id FROM snapshot_names WHERE name = ?)
		ORDER BY s.id = ? DESC LIMIT 1`, idOrName, idOrName, idOrName)
	snap, err := scanSnapshot(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("snapshot %q: %w", idOrName, errdefs.ErrNotFound)
	}
	return snap, err
}

// ListSnapshots implements store.Store.
func (s *Store) ListSnapshots(ctx context.Context) ([]*store.Snapshot, error) {
	rows, err := s.db.QueryContext(ctx, selectSnapshot+` ORDER BY s.created_at DESC, s.id`)
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	defer rows.Close()
	var out []*store.Snapshot
	for rows.Next() {
		snap, err := scanSnapshot(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, snap)
	}
	return out, rows.Err()
}

// DeleteSnapshot implements store.Store; its names go with it.
func (s *Store) DeleteSnapshot(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM snapshots WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("deleting snapshot: %w", err)
	}
	return checkAffected(res, "snapshot "+id)
}

func scanSnapshot(row interface{ Scan(...any) error }) (*store.Snapshot, error) {
	var data, names string
	if err := row.Scan(&data, &names); err != nil {
		return nil, err
	}
	var snap store.Snapshot
	if err := json.Unmarshal([]byte(data), &snap); err != nil {
		return nil, fmt.Errorf("decoding snapshot: %w", err)
	}
	snap.Names = nil
	if err := json.Unmarshal([]byte(names), &snap.Names); err != nil {
		return nil, fmt.Errorf("decoding snapshot names: %w", err)
	}
	if len(snap.Names) == 0 {
		snap.Names = nil
	}
	return &snap, nil
}
