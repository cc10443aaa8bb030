package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/store"
)

// sandboxCols is the column order shared by sandboxArgs and scanSandbox; id
// stays first because the UPDATE matches on it ($1).
var sandboxCols = []string{
	"id", "template_id", "alias", "backend", "state",
	"envd_access_token", "traffic_access_token", "allow_internet",
	"metadata", "env_vars", "cpu_count", "memory_mb", "disk_mb", "ip",
	"started_at", "end_at", "auto_pause", "auto_resume", "api_key_id",
	"auto_pause_no_memory", "network_policy", "team_id", "paused_at", "intent",
	"parked", "node",
}

var (
	selectSandbox = "SELECT " + strings.Join(sandboxCols, ", ") + " FROM sandboxes"
	insertSandbox = "INSERT INTO sandboxes (" + strings.Join(sandboxCols, ", ") +
		") VALUES (" + placeholders(1, len(sandboxCols)) + ")"
	// The node to match is one argument past sandboxCols.
	updateSandbox = "UPDATE sandboxes SET (" + strings.Join(sandboxCols[1:], ", ") +
		") = (" + placeholders(2, len(sandboxCols)-1) + ") WHERE id = $1 AND node = $" +
		strconv.Itoa(len(sandboxCols)+1)
)

// CreateSandbox implements store.Store.
func (s *Store) CreateSandbox(ctx context.Context, sb *store.Sandbox) error {
	args, err := sandboxArgs(sb)
	if err != nil {
		return fmt.Errorf("creating sandbox: %w", err)
	}
	_, err = s.pool.Exec(ctx, insertSandbox, args...)
	if isUniqueViolation(err) {
		return fmt.Errorf("creating sandbox %q: %w", sb.ID, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("creating sandbox %q: %w", sb.ID, err)
	}
	return nil
}

// GetSandbox implements store.Store.
func (s *Store) GetSandbox(ctx context.Context, id string) (*store.Sandbox, error) {
	row := s.pool.QueryRow(ctx, selectSandbox+" WHERE id = $1", id)
	return getOne(row, fmt.Sprintf("sandbox %q", id), scanSandbox)
}

// UpdateSandbox implements store.Store. It is one statement, so a
// concurrent writer's update is never half applied; the last one wins. It
// matches on the node too: a record MoveSandbox handed to another node is
// not this writer's any more.
func (s *Store) UpdateSandbox(ctx context.Context, sb *store.Sandbox) error {
	args, err := sandboxArgs(sb)
	if err != nil {
		return fmt.Errorf("updating sandbox: %w", err)
	}
	tag, err := s.pool.Exec(ctx, updateSandbox, append(args, sb.Node)...)
	return affectedOne(tag, err, fmt.Sprintf("updating sandbox %q", sb.ID))
}

// DeleteSandbox implements store.Store.
func (s *Store) DeleteSandbox(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM sandboxes WHERE id = $1", id)
	return affectedOne(tag, err, fmt.Sprintf("deleting sandbox %q", id))
}

// ListSandboxes implements store.Store: newest StartedAt first, then by id.
func (s *Store) ListSandboxes(ctx context.Context) ([]*store.Sandbox, error) {
	rows, err := s.pool.Query(ctx, selectSandbox+" ORDER BY started_at DESC NULLS LAST, id")
	return collect(rows, err, "listing sandboxes", scanSandbox)
}

// ListSandboxesOnNode implements store.Store.
func (s *Store) ListSandboxesOnNode(ctx context.Context, node string) ([]*store.Sandbox, error) {
	rows, err := s.pool.Query(ctx, selectSandbox+" WHERE node = $1 ORDER BY started_at DESC NULLS LAST, id", node)
	return collect(rows, err, "listing sandboxes of node "+node, scanSandbox)
}

// sandboxArgs returns sb's values in sandboxCols order.
func sandboxArgs(sb *store.Sandbox) ([]any, error) {
	if sb == nil || sb.ID == "" {
		return nil, fmt.Errorf("sandbox without id: %w", errdefs.ErrInvalidArgument)
	}
	var e encoder
	args := []any{
		sb.ID, sb.TemplateID, sb.Alias, sb.Backend, sb.State,
		sb.EnvdAccessToken, sb.TrafficAccessToken, sb.Network.AllowInternet,
		e.json(sb.Metadata, "{}"), e.json(sb.EnvVars, "{}"), sb.CPUCount, sb.MemoryMB, sb.DiskMB, sb.IP,
		e.time(sb.StartedAt), e.time(sb.EndAt), sb.AutoPause, sb.AutoResume, sb.APIKeyID,
		sb.AutoPauseNoMemory, encodePolicy(&e, sb.Network), sb.TeamID, e.time(sb.PausedAt), sb.Intent,
		sb.Parked, sb.Node,
	}
	return args, e.err
}

// encodePolicy is the network_policy column: NULL for a policy that says
// nothing beyond the internet switch, which has a column of its own.
func encodePolicy(e *encoder, p netpolicy.Policy) any {
	if p.IsZero() {
		return nil
	}
	return e.json(p, "{}")
}

// scanSandbox decodes one row selected with sandboxCols.
func scanSandbox(row pgx.Row) (*store.Sandbox, error) {
	var (
		sb                     store.Sandbox
		meta, env, policy      []byte
		started, end, pausedAt *int64
		allowInternet          bool
	)
	err := row.Scan(
		&sb.ID, &sb.TemplateID, &sb.Alias, &sb.Backend, &sb.State,
		&sb.EnvdAccessToken, &sb.TrafficAccessToken, &allowInternet,
		&meta, &env, &sb.CPUCount, &sb.MemoryMB, &sb.DiskMB, &sb.IP,
		&started, &end, &sb.AutoPause, &sb.AutoResume, &sb.APIKeyID,
		&sb.AutoPauseNoMemory, &policy, &sb.TeamID, &pausedAt, &sb.Intent,
		&sb.Parked, &sb.Node,
	)
	if err != nil {
		return nil, err
	}
	if sb.Metadata, err = decodeMap(meta); err != nil {
		return nil, err
	}
	if sb.EnvVars, err = decodeMap(env); err != nil {
		return nil, err
	}
	if len(policy) > 0 {
		if err := json.Unmarshal(policy, &sb.Network); err != nil {
			return nil, fmt.Errorf("sandbox %s: decoding network policy: %w", sb.ID, err)
		}
	}
	sb.Network.AllowInternet = allowInternet
	sb.StartedAt, sb.EndAt, sb.PausedAt = fromNanos(started), fromNanos(end), fromNanos(pausedAt)
	return &sb, nil
}
