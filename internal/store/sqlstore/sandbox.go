package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// sandboxCols is the column order shared by sandboxArgs and scanSandbox;
// id stays first because UPDATE moves it to the WHERE clause.
var sandboxCols = []string{
	"id", "template_id", "alias", "backend", "state",
	"envd_access_token", "traffic_access_token", "allow_internet",
	"metadata", "env_vars", "cpu_count", "memory_mb", "disk_mb", "ip",
	"started_at", "end_at", "auto_pause", "auto_resume", "api_key_id",
	"auto_pause_no_memory", "network_policy", "team_id", "paused_at", "intent",
	"parked", "node", "volume_mounts",
}

var (
	insertSandbox = "INSERT INTO sandboxes (" + strings.Join(sandboxCols, ", ") +
		") VALUES (" + marks(len(sandboxCols)) + ")"
	updateSandbox = "UPDATE sandboxes SET " + strings.Join(sandboxCols[1:], " = ?, ") +
		" = ? WHERE id = ? AND node = ?"
	// An update stores the policy in network_policy and drops the legacy
	// form, which would otherwise be read again for a zero policy.
	updateLegacySandbox = strings.Replace(updateSandbox, " SET ", " SET network = NULL, ", 1)
)

// selectSandbox reads sandboxCols, then the legacy network column where
// the schema has one, or NULL.
func (s *Store) selectSandbox() string {
	legacy := "NULL"
	if s.d.LegacyNetwork() {
		legacy = "network"
	}
	return "SELECT " + strings.Join(sandboxCols, ", ") + ", " + legacy + " FROM sandboxes"
}

// CreateSandbox implements store.Store.
func (s *Store) CreateSandbox(ctx context.Context, sb *store.Sandbox) error {
	args, err := s.sandboxArgs(sb)
	if err != nil {
		return fmt.Errorf("creating sandbox: %w", err)
	}
	_, err = s.db.Exec(ctx, insertSandbox, args...)
	if s.d.IsUniqueViolation(err) {
		return fmt.Errorf("creating sandbox %q: %w", sb.ID, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("creating sandbox %q: %w", sb.ID, err)
	}
	return nil
}

// GetSandbox implements store.Store.
func (s *Store) GetSandbox(ctx context.Context, id string) (*store.Sandbox, error) {
	row := s.db.QueryRow(ctx, s.selectSandbox()+" WHERE id = ?", id)
	return getOne(row, fmt.Sprintf("sandbox %q", id), scanSandbox)
}

// UpdateSandbox implements store.Store. It is one statement, so a
// concurrent writer's update is never half applied; the last one wins. It
// matches on the node too: a record MoveSandbox handed to another node is
// not this writer's any more.
func (s *Store) UpdateSandbox(ctx context.Context, sb *store.Sandbox) error {
	args, err := s.sandboxArgs(sb)
	if err != nil {
		return fmt.Errorf("updating sandbox: %w", err)
	}
	args = append(args[1:], sb.ID, sb.Node)
	q := updateSandbox
	if s.d.LegacyNetwork() {
		q = updateLegacySandbox
	}
	n, err := s.db.Exec(ctx, q, args...)
	return affected(n, err, fmt.Sprintf("updating sandbox %q", sb.ID))
}

// DeleteSandbox implements store.Store.
func (s *Store) DeleteSandbox(ctx context.Context, id string) error {
	n, err := s.db.Exec(ctx, "DELETE FROM sandboxes WHERE id = ?", id)
	return affected(n, err, fmt.Sprintf("deleting sandbox %q", id))
}

// ListSandboxes implements store.Store: newest StartedAt first, then by id
// so the order is stable when start times tie.
func (s *Store) ListSandboxes(ctx context.Context) ([]*store.Sandbox, error) {
	rows, err := s.db.Query(ctx, s.selectSandbox()+" ORDER BY started_at DESC NULLS LAST, id")
	return collect(rows, err, "listing sandboxes", scanSandbox)
}

// ListSandboxesOnNode implements store.Store.
func (s *Store) ListSandboxesOnNode(ctx context.Context, node string) ([]*store.Sandbox, error) {
	rows, err := s.db.Query(ctx, s.selectSandbox()+" WHERE node = ? ORDER BY started_at DESC NULLS LAST, id", node)
	return collect(rows, err, "listing sandboxes of node "+node, scanSandbox)
}

// sandboxArgs returns sb's values in sandboxCols order.
func (s *Store) sandboxArgs(sb *store.Sandbox) ([]any, error) {
	if sb == nil || sb.ID == "" {
		return nil, fmt.Errorf("sandbox without id: %w", errdefs.ErrInvalidArgument)
	}
	e := s.enc()
	var policy any // NULL: nothing beyond the internet switch, which has a column
	if !sb.Network.IsZero() {
		policy = e.json(sb.Network, "{}")
	}
	args := []any{
		sb.ID, sb.TemplateID, sb.Alias, sb.Backend, sb.State,
		sb.EnvdAccessToken, sb.TrafficAccessToken, sb.Network.AllowInternet,
		e.json(sb.Metadata, "{}"), e.json(sb.EnvVars, "{}"), sb.CPUCount, sb.MemoryMB, sb.DiskMB, sb.IP,
		e.time(sb.StartedAt), e.time(sb.EndAt), sb.AutoPause, sb.AutoResume, sb.APIKeyID,
		sb.AutoPauseNoMemory, policy, sb.TeamID, e.nullTime(sb.PausedAt), sb.Intent,
		sb.Parked, sb.Node, e.volumeMounts(sb.VolumeMounts),
	}
	return args, e.err
}

// scanSandbox decodes one row selected with selectSandbox.
func scanSandbox(row Row) (*store.Sandbox, error) {
	var (
		sb                     store.Sandbox
		meta, env              jsonCol
		policy, legacy, mounts jsonCol
		started, end, pausedAt timeCol
		allowInternet          bool
	)
	err := row.Scan(
		&sb.ID, &sb.TemplateID, &sb.Alias, &sb.Backend, &sb.State,
		&sb.EnvdAccessToken, &sb.TrafficAccessToken, &allowInternet,
		&meta, &env, &sb.CPUCount, &sb.MemoryMB, &sb.DiskMB, &sb.IP,
		&started, &end, &sb.AutoPause, &sb.AutoResume, &sb.APIKeyID,
		&sb.AutoPauseNoMemory, &policy, &sb.TeamID, &pausedAt, &sb.Intent,
		&sb.Parked, &sb.Node, &mounts, &legacy,
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
	if sb.Network, err = decodePolicy(policy, legacy); err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", sb.ID, err)
	}
	if sb.VolumeMounts, err = decodeVolumeMounts(mounts); err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", sb.ID, err)
	}
	sb.Network.AllowInternet = allowInternet
	sb.StartedAt, sb.EndAt, sb.PausedAt = started.t, end.t, pausedAt.t
	return &sb, nil
}
