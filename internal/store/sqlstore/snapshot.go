package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// snapshotNames is the name CreateSnapshot locks (Dialect.LockName): a
// snapshot's id must be no other snapshot's name and a name no other
// snapshot's id, a rule across two tables that no unique index enforces.
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
	created, err := s.d.Time(snap.CreatedAt)
	if err != nil {
		return fmt.Errorf("creating snapshot %q: %w", snap.ID, err)
	}
	return s.db.InTx(ctx, func(tx Conn) error {
		if err := s.d.LockName(ctx, tx, snapshotNames); err != nil {
			return fmt.Errorf("creating snapshot %q: %w", snap.ID, err)
		}
		if err := checkSnapshotNames(ctx, tx, snap); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO snapshots (id, created_at, data) VALUES (?, ?, ?)`, snap.ID, created, string(data))
		if s.d.IsUniqueViolation(err) {
			return fmt.Errorf("snapshot %q: %w", snap.ID, errdefs.ErrAlreadyExists)
		}
		if err != nil {
			return fmt.Errorf("creating snapshot %q: %w", snap.ID, err)
		}
		for _, n := range snap.Names {
			_, err := tx.Exec(ctx, `INSERT INTO snapshot_names (name, snapshot_id) VALUES (?, ?)
				ON CONFLICT (name) DO UPDATE SET snapshot_id = excluded.snapshot_id`, n, snap.ID)
			if err != nil {
				return fmt.Errorf("naming snapshot %q: %w", n, err)
			}
		}
		return nil
	})
}

// checkSnapshotNames runs under the snapshotNames lock.
func checkSnapshotNames(ctx context.Context, tx Conn, snap *store.Snapshot) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM snapshot_names WHERE name = ?`, snap.ID).Scan(&one)
	if err == nil {
		return fmt.Errorf("snapshot id %q is another snapshot's name: %w", snap.ID, errdefs.ErrAlreadyExists)
	}
	if !errors.Is(err, ErrNoRows) {
		return fmt.Errorf("checking snapshot id: %w", err)
	}
	if len(snap.Names) == 0 {
		return nil
	}
	var id string
	err = tx.QueryRow(ctx, `SELECT id FROM snapshots WHERE id IN (`+marks(len(snap.Names))+`) LIMIT 1`,
		anyArgs(snap.Names)...).Scan(&id)
	if err == nil {
		return fmt.Errorf("snapshot name %q is another snapshot's id: %w", id, errdefs.ErrAlreadyExists)
	}
	if !errors.Is(err, ErrNoRows) {
		return fmt.Errorf("checking snapshot names: %w", err)
	}
	return nil
}

// selectSnapshot reads a record with its current names (a name may have
// moved to a newer snapshot since this one was written).
func (s *Store) selectSnapshot() string {
	return `SELECT s.data, (SELECT ` + s.d.JSONList("n.name", "n.name") +
		` FROM snapshot_names n WHERE n.snapshot_id = s.id) FROM snapshots s`
}

// GetSnapshot implements store.Store.
func (s *Store) GetSnapshot(ctx context.Context, idOrName string) (*store.Snapshot, error) {
	row := s.db.QueryRow(ctx, s.selectSnapshot()+` WHERE s.id = ?
		OR s.id = (SELECT snapshot_id FROM snapshot_names WHERE name = ?)
		ORDER BY s.id = ? DESC LIMIT 1`, idOrName, idOrName, idOrName)
	return getOne(row, fmt.Sprintf("snapshot %q", idOrName), scanSnapshot)
}

// ListSnapshots implements store.Store: newest first.
func (s *Store) ListSnapshots(ctx context.Context) ([]*store.Snapshot, error) {
	rows, err := s.db.Query(ctx, s.selectSnapshot()+` ORDER BY s.created_at DESC NULLS LAST, s.id`)
	return collect(rows, err, "listing snapshots", scanSnapshot)
}

// DeleteSnapshot implements store.Store; its names go with it.
func (s *Store) DeleteSnapshot(ctx context.Context, id string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM snapshots WHERE id = ?`, id)
	return affected(n, err, fmt.Sprintf("deleting snapshot %q", id))
}

func scanSnapshot(row Row) (*store.Snapshot, error) {
	var data, names jsonCol
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
