package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// snapshotNames keys the advisory lock CreateSnapshot holds: a snapshot's
// id must be no other snapshot's name and a name no other snapshot's id,
// a rule across two tables that no unique index enforces.
const snapshotNames = "warren.snapshot_names"

// CreateSnapshot implements store.Store. A name another snapshot has moves
// to this one, in the same transaction as the insert.
func (s *Store) CreateSnapshot(ctx context.Context, snap *store.Snapshot) error {
	if snap.ID == "" {
		return fmt.Errorf("snapshot without id: %w", errdefs.ErrInvalidArgument)
	}
	data, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("encoding snapshot: %w", err)
	}
	var e encoder
	created := e.time(snap.CreatedAt)
	if e.err != nil {
		return fmt.Errorf("creating snapshot %q: %w", snap.ID, e.err)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockName(ctx, tx, snapshotNames); err != nil {
			return fmt.Errorf("creating snapshot %q: %w", snap.ID, err)
		}
		if err := checkSnapshotNames(ctx, tx, snap); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO snapshots (id, created_at, data) VALUES ($1, $2, $3)`, snap.ID, created, string(data))
		if isUniqueViolation(err) {
			return fmt.Errorf("snapshot %q: %w", snap.ID, errdefs.ErrAlreadyExists)
		}
		if err != nil {
			return fmt.Errorf("creating snapshot %q: %w", snap.ID, err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO snapshot_names (name, snapshot_id) SELECT DISTINCT unnest($1::text[]), $2
			ON CONFLICT (name) DO UPDATE SET snapshot_id = excluded.snapshot_id`, snap.Names, snap.ID)
		if err != nil {
			return fmt.Errorf("naming snapshot %q: %w", snap.ID, err)
		}
		return nil
	})
}

// checkSnapshotNames runs under the snapshotNames lock.
func checkSnapshotNames(ctx context.Context, tx pgx.Tx, snap *store.Snapshot) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM snapshot_names WHERE name = $1`, snap.ID).Scan(&one)
	if err == nil {
		return fmt.Errorf("snapshot id %q is another snapshot's name: %w", snap.ID, errdefs.ErrAlreadyExists)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("checking snapshot id: %w", err)
	}
	var id string
	err = tx.QueryRow(ctx, `SELECT id FROM snapshots WHERE id = ANY($1) LIMIT 1`, snap.Names).Scan(&id)
	if err == nil {
		return fmt.Errorf("snapshot name %q is another snapshot's id: %w", id, errdefs.ErrAlreadyExists)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("checking snapshot names: %w", err)
	}
	return nil
}

// selectSnapshot reads a record with its current names (a name may have
// moved to a newer snapshot since this one was written).
const selectSnapshot = `SELECT s.data,
	(SELECT coalesce(jsonb_agg(n.name ORDER BY n.name), '[]') FROM snapshot_names n WHERE n.snapshot_id = s.id)
FROM snapshots s`

// GetSnapshot implements store.Store.
func (s *Store) GetSnapshot(ctx context.Context, idOrName string) (*store.Snapshot, error) {
	row := s.pool.QueryRow(ctx, selectSnapshot+` WHERE s.id = $1
		OR s.id = (SELECT snapshot_id FROM snapshot_names WHERE name = $1)
		ORDER BY s.id = $1 DESC LIMIT 1`, idOrName)
	return getOne(row, fmt.Sprintf("snapshot %q", idOrName), scanSnapshot)
}

// ListSnapshots implements store.Store: newest first.
func (s *Store) ListSnapshots(ctx context.Context) ([]*store.Snapshot, error) {
	rows, err := s.pool.Query(ctx, selectSnapshot+` ORDER BY s.created_at DESC NULLS LAST, s.id`)
	return collect(rows, err, "listing snapshots", scanSnapshot)
}

// DeleteSnapshot implements store.Store; its names go with it.
func (s *Store) DeleteSnapshot(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM snapshots WHERE id = $1`, id)
	return affectedOne(tag, err, fmt.Sprintf("deleting snapshot %q", id))
}

func scanSnapshot(row pgx.Row) (*store.Snapshot, error) {
	var data, names []byte
	if err := row.Scan(&data, &names); err != nil {
		return nil, err
	}
	var snap store.Snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return nil, fmt.Errorf("decoding snapshot: %w", err)
	}
	var err error
	if snap.Names, err = decodeList(names); err != nil {
		return nil, fmt.Errorf("decoding snapshot names: %w", err)
	}
	return &snap, nil
}
