package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const (
	nodeCols = `name, advertise_url, cpus, memory_mb, disk_mb, sandboxes, reserved_cpus,
		reserved_memory_mb, templates, share_id, version, started_at, heartbeat_at`
	selectNode = `SELECT ` + nodeCols + ` FROM nodes`
)

// PutNode implements store.Store: one upsert, so a node's heartbeats never
// collide with each other or with its first registration.
func (s *Store) PutNode(ctx context.Context, n *store.Node) error {
	if n == nil || n.Name == "" {
		return fmt.Errorf("node without name: %w", errdefs.ErrInvalidArgument)
	}
	var e encoder
	args := []any{n.Name, n.AdvertiseURL, n.CPUs, n.MemoryMB, n.DiskMB, n.Sandboxes, n.ReservedCPUs,
		n.ReservedMemoryMB, e.json(n.Templates, "[]"), n.ShareID, n.Version, e.time(n.StartedAt),
		e.time(n.HeartbeatAt)}
	if e.err != nil {
		return fmt.Errorf("putting node %q: %w", n.Name, e.err)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO nodes (`+nodeCols+`)
		VALUES (`+placeholders(1, len(args))+`) ON CONFLICT (name) DO UPDATE SET
		advertise_url = excluded.advertise_url, cpus = excluded.cpus, memory_mb = excluded.memory_mb,
		disk_mb = excluded.disk_mb, sandboxes = excluded.sandboxes, reserved_cpus = excluded.reserved_cpus,
		reserved_memory_mb = excluded.reserved_memory_mb, templates = excluded.templates,
		share_id = excluded.share_id, version = excluded.version, started_at = excluded.started_at,
		heartbeat_at = excluded.heartbeat_at`,
		args...)
	if err != nil {
		return fmt.Errorf("putting node %q: %w", n.Name, err)
	}
	return nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, name string) (*store.Node, error) {
	return getOne(s.pool.QueryRow(ctx, selectNode+` WHERE name = $1`, name), fmt.Sprintf("node %q", name), scanNode)
}

// ListNodes implements store.Store.
func (s *Store) ListNodes(ctx context.Context) ([]*store.Node, error) {
	rows, err := s.pool.Query(ctx, selectNode+` ORDER BY name`)
	return collect(rows, err, "listing nodes", scanNode)
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, name string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM nodes WHERE name = $1`, name)
	return affectedOne(tag, err, fmt.Sprintf("deleting node %q", name))
}

// MoveSandbox implements store.Store: one conditional UPDATE, whose row
// lock makes a second mover wait and then find the row no longer on from;
// the read after a miss only tells which error to return.
func (s *Store) MoveSandbox(ctx context.Context, id, from, to string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE sandboxes SET node = $1
		WHERE id = $2 AND node = $3 AND state = $4 AND parked`, to, id, from, store.SandboxPaused)
	if err != nil {
		return fmt.Errorf("moving sandbox %q: %w", id, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var (
		node, state string
		parked      bool
	)
	err = s.pool.QueryRow(ctx, `SELECT node, state, parked FROM sandboxes WHERE id = $1`, id).
		Scan(&node, &state, &parked)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("moving sandbox %q: %w", id, errdefs.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("moving sandbox %q: %w", id, err)
	}
	return store.MoveConflict(id, from, node, state, parked)
}

func scanNode(row pgx.Row) (*store.Node, error) {
	var (
		n           store.Node
		tpls        []byte
		started, hb *int64
	)
	err := row.Scan(&n.Name, &n.AdvertiseURL, &n.CPUs, &n.MemoryMB, &n.DiskMB, &n.Sandboxes,
		&n.ReservedCPUs, &n.ReservedMemoryMB, &tpls, &n.ShareID, &n.Version, &started, &hb)
	if err != nil {
		return nil, err
	}
	if n.Templates, err = decodeList(tpls); err != nil {
		return nil, err
	}
	n.StartedAt, n.HeartbeatAt = fromNanos(started), fromNanos(hb)
	return &n, nil
}
