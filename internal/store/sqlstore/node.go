package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const (
	nodeCols = `name, advertise_url, cpus, memory_mb, disk_mb, sandboxes, reserved_cpus,
		reserved_memory_mb, templates, share_id, version, started_at, heartbeat_at`
	selectNode = `SELECT ` + nodeCols + ` FROM nodes`
	upsertNode = `INSERT INTO nodes (` + nodeCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET
		advertise_url = excluded.advertise_url, cpus = excluded.cpus, memory_mb = excluded.memory_mb,
		disk_mb = excluded.disk_mb, sandboxes = excluded.sandboxes, reserved_cpus = excluded.reserved_cpus,
		reserved_memory_mb = excluded.reserved_memory_mb, templates = excluded.templates,
		share_id = excluded.share_id, version = excluded.version, started_at = excluded.started_at,
		heartbeat_at = excluded.heartbeat_at`
)

// PutNode implements store.Store: one upsert, so a node's heartbeats never
// collide with each other or with its first registration.
func (s *Store) PutNode(ctx context.Context, n *store.Node) error {
	if n == nil || n.Name == "" {
		return fmt.Errorf("node without name: %w", errdefs.ErrInvalidArgument)
	}
	e := s.enc()
	args := []any{n.Name, n.AdvertiseURL, n.CPUs, n.MemoryMB, n.DiskMB, n.Sandboxes, n.ReservedCPUs,
		n.ReservedMemoryMB, e.json(n.Templates, "[]"), n.ShareID, n.Version, e.time(n.StartedAt),
		e.time(n.HeartbeatAt)}
	if e.err != nil {
		return fmt.Errorf("putting node %q: %w", n.Name, e.err)
	}
	if _, err := s.db.Exec(ctx, upsertNode, args...); err != nil {
		return fmt.Errorf("putting node %q: %w", n.Name, err)
	}
	return nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, name string) (*store.Node, error) {
	return getOne(s.db.QueryRow(ctx, selectNode+` WHERE name = ?`, name), fmt.Sprintf("node %q", name), scanNode)
}

// ListNodes implements store.Store.
func (s *Store) ListNodes(ctx context.Context) ([]*store.Node, error) {
	rows, err := s.db.Query(ctx, selectNode+` ORDER BY name`)
	return collect(rows, err, "listing nodes", scanNode)
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, name string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM nodes WHERE name = ?`, name)
	return affected(n, err, fmt.Sprintf("deleting node %q", name))
}

// MoveSandbox implements store.Store: one conditional UPDATE, whose row
// lock (Postgres) or the one writer (SQLite) makes a second mover wait and
// then find the row no longer on from; the read after a miss only tells
// which error to return.
func (s *Store) MoveSandbox(ctx context.Context, id, from, to string) error {
	n, err := s.db.Exec(ctx, `UPDATE sandboxes SET node = ?
		WHERE id = ? AND node = ? AND state = ? AND parked`, to, id, from, store.SandboxPaused)
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
	err = s.db.QueryRow(ctx, `SELECT node, state, parked FROM sandboxes WHERE id = ?`, id).
		Scan(&node, &state, &parked)
	if errors.Is(err, ErrNoRows) {
		return fmt.Errorf("moving sandbox %q: %w", id, errdefs.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("moving sandbox %q: %w", id, err)
	}
	return store.MoveConflict(id, from, node, state, parked)
}

func scanNode(row Row) (*store.Node, error) {
	var (
		n           store.Node
		tpls        jsonCol
		started, hb timeCol
	)
	err := row.Scan(&n.Name, &n.AdvertiseURL, &n.CPUs, &n.MemoryMB, &n.DiskMB, &n.Sandboxes,
		&n.ReservedCPUs, &n.ReservedMemoryMB, &tpls, &n.ShareID, &n.Version, &started, &hb)
	if err != nil {
		return nil, err
	}
	if n.Templates, err = decodeList(tpls); err != nil {
		return nil, err
	}
	n.StartedAt, n.HeartbeatAt = started.t, hb.t
	return &n, nil
}
