package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// sandboxCols is the column order shared by sandboxArgs and scanSandbox; id
// must stay first because the UPDATE statement moves it to the WHERE clause.
var sandboxCols = []string{
	"id", "template_id", "alias", "backend", "state",
	"envd_access_token", "traffic_access_token", "allow_internet",
	"metadata", "env_vars", "cpu_count", "memory_mb", "disk_mb", "ip",
	"started_at", "end_at", "auto_pause", "auto_resume", "network", "api_key_id",
	"auto_pause_no_memory", "network_policy", "team_id", "paused_at", "intent",
	"parked", "node",
}

var (
	selectSandbox = "SELECT " + strings.Join(sandboxCols, ", ") + " FROM sandboxes"
	insertSandbox = "INSERT INTO sandboxes (" + strings.Join(sandboxCols, ", ") +
		") VALUES (" + placeholders(len(sandboxCols)) + ")"
	updateSandbox = "UPDATE sandboxes SET " + strings.Join(sandboxCols[1:], " = ?, ") +
		" = ? WHERE id = ? AND node = ?"
)

// CreateSandbox implements store.Store.
func (s *Store) CreateSandbox(ctx context.Context, sb *store.Sandbox) error {
	args, err := sandboxArgs(sb)
	if err != nil {
		return fmt.Errorf("creating sandbox: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, insertSandbox, args...); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("creating sandbox %q: %w", sb.ID, errdefs.ErrAlreadyExists)
		}
		return fmt.Errorf("creating sandbox %q: %w", sb.ID, err)
	}
	return nil
}

// GetSandbox implements store.Store.
func (s *Store) GetSandbox(ctx context.Context, id string) (*store.Sandbox, error) {
	row := s.db.QueryRowContext(ctx, selectSandbox+" WHERE id = ?", id)
	sb, err := scanSandbox(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sandbox %q: %w", id, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("getting sandbox %q: %w", id, err)
	}
	return sb, nil
}

// UpdateSandbox implements store.Store.
func (s *Store) UpdateSandbox(ctx context.Context, sb *store.Sandbox) error {
	args, err := sandboxArgs(sb)
	if err != nil {
		return fmt.Errorf("updating sandbox: %w", err)
	}
	// Columns after id, then id and node for the WHERE clause: a record
	// MoveSandbox handed to another node is not this writer's any more.
	args = append(args[1:], sb.ID, sb.Node)
	res, err := s.db.ExecContext(ctx, updateSandbox, args...)
	if err != nil {
		return fmt.Errorf("updating sandbox %q: %w", sb.ID, err)
	}
	return checkAffected(res, fmt.Sprintf("updating sandbox %q", sb.ID))
}

// DeleteSandbox implements store.Store.
func (s *Store) DeleteSandbox(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, "DELETE FROM sandboxes WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("deleting sandbox %q: %w", id, err)
	}
	return checkAffected(res, fmt.Sprintf("deleting sandbox %q", id))
}

// ListSandboxes implements store.Store: newest StartedAt first, then by id so
// the order is stable when start times tie.
func (s *Store) ListSandboxes(ctx context.Context) ([]*store.Sandbox, error) {
	return s.listSandboxes(ctx, "")
}

// ListSandboxesOnNode implements store.Store.
func (s *Store) ListSandboxesOnNode(ctx context.Context, node string) ([]*store.Sandbox, error) {
	return s.listSandboxes(ctx, " WHERE node = ?", node)
}

func (s *Store) listSandboxes(ctx context.Context, where string, args ...any) ([]*store.Sandbox, error) {
	rows, err := s.db.QueryContext(ctx, selectSandbox+where+" ORDER BY started_at DESC, id", args...)
	if err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	defer rows.Close()
	var out []*store.Sandbox
	for rows.Next() {
		sb, err := scanSandbox(rows)
		if err != nil {
			return nil, fmt.Errorf("listing sandboxes: %w", err)
		}
		out = append(out, sb)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	return out, nil
}

// sandboxArgs returns sb's values in sandboxCols order.
func sandboxArgs(sb *store.Sandbox) ([]any, error) {
	if sb == nil || sb.ID == "" {
		return nil, fmt.Errorf("sandbox without id: %w", errdefs.ErrInvalidArgument)
	}
	meta, err := encodeMap(sb.Metadata)
	if err != nil {
		return nil, err
	}
	env, err := encodeMap(sb.EnvVars)
	if err != nil {
		return nil, err
	}
	policy, err := encodePolicy(sb.Network)
	if err != nil {
		return nil, err
	}
	return []any{
		sb.ID, sb.TemplateID, sb.Alias, sb.Backend, sb.State,
		sb.EnvdAccessToken, sb.TrafficAccessToken, sb.Network.AllowInternet,
		meta, env, sb.CPUCount, sb.MemoryMB, sb.DiskMB, sb.IP,
		formatTime(sb.StartedAt), formatTime(sb.EndAt), sb.AutoPause, sb.AutoResume,
		nil, sb.APIKeyID, sb.AutoPauseNoMemory, policy, sb.TeamID, pausedAt(sb.PausedAt),
		sb.Intent, sb.Parked, sb.Node,
	}, nil
}

// scanSandbox decodes one row selected with sandboxCols.
func scanSandbox(sc scanner) (*store.Sandbox, error) {
	var (
		sb               store.Sandbox
		meta, env        string
		startedAt, endAt string
		legacy, policy   []byte
		allowInternet    bool
		paused           sql.NullString
	)
	err := sc.Scan(
		&sb.ID, &sb.TemplateID, &sb.Alias, &sb.Backend, &sb.State,
		&sb.EnvdAccessToken, &sb.TrafficAccessToken, &allowInternet,
		&meta, &env, &sb.CPUCount, &sb.MemoryMB, &sb.DiskMB, &sb.IP,
		&startedAt, &endAt, &sb.AutoPause, &sb.AutoResume,
		&legacy, &sb.APIKeyID, &sb.AutoPauseNoMemory, &policy, &sb.TeamID, &paused,
		&sb.Intent, &sb.Parked, &sb.Node,
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
	if sb.StartedAt, err = parseTime(startedAt); err != nil {
		return nil, err
	}
	if sb.EndAt, err = parseTime(endAt); err != nil {
		return nil, err
	}
	if sb.Network, err = decodePolicy(policy, legacy); err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", sb.ID, err)
	}
	sb.Network.AllowInternet = allowInternet
	if p, err := parseTimePtr(paused); err != nil {
		return nil, err
	} else if p != nil {
		sb.PausedAt = *p
	}
	return &sb, nil
}

// pausedAt is the paused_at column: NULL while running.
func pausedAt(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}
