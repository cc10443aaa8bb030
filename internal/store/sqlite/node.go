package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const (
	nodeCols = `name, advertise_url, cpus, memory_mb, disk_mb, sandboxes, reserved_cpus,
		reserved_memory_mb, templates, share_id, version, started_at, heartbeat_at`
	selectNode = `SELECT ` + nodeCols + ` FROM nodes`
)

// PutNode implements store.Store: one upsert, the heartbeat.
func (s *Store) PutNode(ctx context.Context, n *store.Node) error {
	if n == nil || n.Name == "" {
		return fmt.Errorf("node without name: %w", errdefs.ErrInvalidArgument)
	}
	tpls, err := encodeList(n.Templates)
	if err != nil {
		return fmt.Errorf("putting node %q: %w", n.Name, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO nodes (`+nodeCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET
		advertise_url = excluded.advertise_url, cpus = excluded.cpus, memory_mb = excluded.memory_mb,
		disk_mb = excluded.disk_mb, sandboxes = excluded.sandboxes, reserved_cpus = excluded.reserved_cpus,
		reserved_memory_mb = excluded.reserved_memory_mb, templates = excluded.templates,
		share_id = excluded.share_id, version = excluded.version, started_at = excluded.started_at,
		heartbeat_at = excluded.heartbeat_at`,
		n.Name, n.AdvertiseURL, n.CPUs, n.MemoryMB, n.DiskMB, n.Sandboxes, n.ReservedCPUs,
		n.ReservedMemoryMB, tpls, n.ShareID, n.Version, formatTime(n.StartedAt), formatTime(n.HeartbeatAt))
	if err != nil {
		return fmt.Errorf("putting node %q: %w", n.Name, err)
	}
	return nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, name string) (*store.Node, error) {
	n, err := scanNode(s.db.QueryRowContext(ctx, selectNode+` WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("node %q: %w", name, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("getting node %q: %w", name, err)
	}
	return n, nil
}

// ListNodes implements store.Store.
func (s *Store) ListNodes(ctx context.Context) ([]*store.Node, error) {
	rows, err := s.db.QueryContext(ctx, selectNode+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	defer rows.Close()
	var out []*store.Node
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	return out, nil
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, name string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM nodes WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("deleting node %q: %w", name, err)
	}
	return checkAffected(res, fmt.Sprintf("deleting node %q", name))
}

// MoveSandbox implements store.Store: one conditional UPDATE, so of two
// movers only one finds the row still on from; the read after a miss only
// tells which error to return.
func (s *Store) MoveSandbox(ctx context.Context, id, from, to string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET node = ?
		WHERE id = ? AND node = ? AND state = ? AND parked`, to, id, from, store.SandboxPaused)
	if err != nil {
		return fmt.Errorf("moving sandbox %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("moving sandbox %q: %w", id, err)
	}
	if n > 0 {
		return nil
	}
	var (
		node, state string
		parked      bool
	)
	err = s.db.QueryRowContext(ctx, `SELECT node, state, parked FROM sandboxes WHERE id = ?`, id).
		Scan(&node, &state, &parked)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("moving sandbox %q: %w", id, errdefs.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("moving sandbox %q: %w", id, err)
	}
	return store.MoveConflict(id, from, node, state, parked)
}

func scanNode(sc scanner) (*store.Node, error) {
	var (
		n                 store.Node
		tpls, started, hb string
	)
	err := sc.Scan(&n.Name, &n.AdvertiseURL, &n.CPUs, &n.MemoryMB, &n.DiskMB, &n.Sandboxes,
		&n.ReservedCPUs, &n.ReservedMemoryMB, &tpls, &n.ShareID, &n.Version, &started, &hb)
	if err != nil {
		return nil, err
	}
	if n.Templates, err = decodeList(tpls); err != nil {
		return nil, err
	}
	if n.StartedAt, err = parseTime(started); err != nil {
		return nil, err
	}
	if n.HeartbeatAt, err = parseTime(hb); err != nil {
		return nil, err
	}
	return &n, nil
}
