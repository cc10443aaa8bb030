package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// selectTemplate reads templates with their aliases folded into a JSON list
// in one statement, so a record never mixes two versions of its aliases and
// listing needs no query per template.
const selectTemplate = `SELECT t.id, t.backend, t.rootfs_path, t.cpu_count, t.memory_mb,
	t.disk_mb, t.envd_version, t.start_cmd, t.build_id, t.public, t.created_at,
	t.updated_at, t.size_bytes, t.ready_port, t.layers, t.env, t.workdir, t.user,
	t.ready_cmd, t.labels, t.team_id,
	(SELECT json_group_array(a.alias ORDER BY a.position)
	   FROM template_aliases a WHERE a.template_id = t.id)
FROM templates t`

const upsertTemplate = `INSERT INTO templates (id, backend, rootfs_path, cpu_count, memory_mb,
	disk_mb, envd_version, start_cmd, build_id, public, created_at, updated_at, size_bytes,
	ready_port, layers, env, workdir, user, ready_cmd, labels, team_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	backend = excluded.backend, rootfs_path = excluded.rootfs_path,
	cpu_count = excluded.cpu_count, memory_mb = excluded.memory_mb,
	disk_mb = excluded.disk_mb, envd_version = excluded.envd_version,
	start_cmd = excluded.start_cmd, build_id = excluded.build_id,
	public = excluded.public, created_at = excluded.created_at,
	updated_at = excluded.updated_at, size_bytes = excluded.size_bytes,
	ready_port = excluded.ready_port, layers = excluded.layers,
	env = excluded.env, workdir = excluded.workdir, user = excluded.user,
	ready_cmd = excluded.ready_cmd, labels = excluded.labels, team_id = excluded.team_id`

// PutTemplate implements store.Store. An alias may name only one template,
// and neither an alias nor an id may equal another template's id or alias,
// so GetTemplate always has a single answer.
func (s *Store) PutTemplate(ctx context.Context, t *store.Template) error {
	if err := checkTemplate(t); err != nil {
		return err
	}
	args, err := templateArgs(t)
	if err != nil {
		return fmt.Errorf("putting template %q: %w", t.ID, err)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkAliasConflicts(ctx, tx, t); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, upsertTemplate, args...); err != nil {
			return fmt.Errorf("putting template %q: %w", t.ID, err)
		}
		return replaceAliases(ctx, tx, t)
	})
}

// templateArgs returns t's values in upsertTemplate's column order, with the
// collections encoded as JSON.
func templateArgs(t *store.Template) ([]any, error) {
	layers, err := encodeList(t.Layers)
	if err != nil {
		return nil, err
	}
	env, err := encodeMap(t.Env)
	if err != nil {
		return nil, err
	}
	labels, err := encodeMap(t.Labels)
	if err != nil {
		return nil, err
	}
	return []any{
		t.ID, t.Backend, t.RootfsPath, t.CPUCount, t.MemoryMB,
		t.DiskMB, t.EnvdVersion, t.StartCmd, t.BuildID, t.Public,
		formatTime(t.CreatedAt), formatTime(t.UpdatedAt), t.SizeBytes, t.ReadyPort,
		layers, env, t.Workdir, t.User, t.ReadyCmd, labels, t.TeamID,
	}, nil
}

// checkAliasConflicts runs inside PutTemplate's write transaction, so nothing
// can claim a name between the check and the insert.
func checkAliasConflicts(ctx context.Context, tx *sql.Tx, t *store.Template) error {
	owner, err := aliasOwner(ctx, tx, t.ID, t.ID)
	if err != nil {
		return err
	}
	if owner != "" {
		return fmt.Errorf("putting template %q: id is an alias of template %q: %w", t.ID, owner, errdefs.ErrAlreadyExists)
	}
	for _, a := range t.Aliases {
		owner, err := aliasOwner(ctx, tx, a, t.ID)
		if err != nil {
			return err
		}
		if owner != "" {
			return fmt.Errorf("putting template %q: alias %q belongs to template %q: %w", t.ID, a, owner, errdefs.ErrAlreadyExists)
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM templates WHERE id = ? AND id <> ?`, a, t.ID).Scan(&one)
		if err == nil {
			return fmt.Errorf("putting template %q: alias %q is another template's id: %w", t.ID, a, errdefs.ErrAlreadyExists)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("putting template %q: checking alias %q: %w", t.ID, a, err)
		}
	}
	return nil
}

// aliasOwner returns the template other than self that holds alias, or "".
func aliasOwner(ctx context.Context, tx *sql.Tx, alias, self string) (string, error) {
	var owner string
	err := tx.QueryRowContext(ctx,
		`SELECT template_id FROM template_aliases WHERE alias = ? AND template_id <> ?`, alias, self).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("looking up alias %q: %w", alias, err)
	}
	return owner, nil
}

func replaceAliases(ctx context.Context, tx *sql.Tx, t *store.Template) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM template_aliases WHERE template_id = ?`, t.ID); err != nil {
		return fmt.Errorf("putting template %q: clearing aliases: %w", t.ID, err)
	}
	for i, a := range t.Aliases {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO template_aliases (alias, template_id, position) VALUES (?, ?, ?)`, a, t.ID, i)
		if isUniqueViolation(err) {
			return fmt.Errorf("putting template %q: alias %q: %w", t.ID, a, errdefs.ErrAlreadyExists)
		}
		if err != nil {
			return fmt.Errorf("putting template %q: adding alias %q: %w", t.ID, a, err)
		}
	}
	return nil
}

// GetTemplate implements store.Store. An id match is preferred; PutTemplate
// keeps ids and aliases from overlapping, so the ORDER BY is only a guard.
func (s *Store) GetTemplate(ctx context.Context, idOrAlias string) (*store.Template, error) {
	row := s.db.QueryRowContext(ctx, selectTemplate+`
		WHERE t.id = ? OR t.id = (SELECT template_id FROM template_aliases WHERE alias = ?)
		ORDER BY t.id = ? DESC LIMIT 1`, idOrAlias, idOrAlias, idOrAlias)
	t, err := scanTemplate(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("template %q: %w", idOrAlias, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("getting template %q: %w", idOrAlias, err)
	}
	return t, nil
}

// ListTemplates implements store.Store: oldest CreatedAt first, then by id.
func (s *Store) ListTemplates(ctx context.Context) ([]*store.Template, error) {
	rows, err := s.db.QueryContext(ctx, selectTemplate+" ORDER BY t.created_at, t.id")
	if err != nil {
		return nil, fmt.Errorf("listing templates: %w", err)
	}
	defer rows.Close()
	var out []*store.Template
	for rows.Next() {
		t, err := scanTemplate(rows)
		if err != nil {
			return nil, fmt.Errorf("listing templates: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing templates: %w", err)
	}
	return out, nil
}

// DeleteTemplate implements store.Store; ON DELETE CASCADE frees the aliases
// and removes the template's builds and tags in the same statement.
func (s *Store) DeleteTemplate(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM templates WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("deleting template %q: %w", id, err)
	}
	return checkAffected(res, fmt.Sprintf("deleting template %q", id))
}

func scanTemplate(sc scanner) (*store.Template, error) {
	var (
		t                    store.Template
		createdAt, updatedAt string
		aliases              string
		layers, env, labels  string
	)
	err := sc.Scan(&t.ID, &t.Backend, &t.RootfsPath, &t.CPUCount, &t.MemoryMB,
		&t.DiskMB, &t.EnvdVersion, &t.StartCmd, &t.BuildID, &t.Public, &createdAt,
		&updatedAt, &t.SizeBytes, &t.ReadyPort, &layers, &env, &t.Workdir, &t.User,
		&t.ReadyCmd, &labels, &t.TeamID, &aliases)
	if err != nil {
		return nil, err
	}
	if t.Layers, err = decodeList(layers); err != nil {
		return nil, err
	}
	if t.Env, err = decodeMap(env); err != nil {
		return nil, err
	}
	if t.Labels, err = decodeMap(labels); err != nil {
		return nil, err
	}
	if t.CreatedAt, err = parseTime(createdAt); err != nil {
		return nil, err
	}
	if t.UpdatedAt, err = parseTime(updatedAt); err != nil {
		return nil, err
	}
	if t.Aliases, err = decodeList(aliases); err != nil {
		return nil, fmt.Errorf("decoding aliases of template %q: %w", t.ID, err)
	}
	return &t, nil
}

// checkTemplate rejects what the store could not keep faithfully: a missing
// id, an empty alias, or one alias listed twice.
func checkTemplate(t *store.Template) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("template without id: %w", errdefs.ErrInvalidArgument)
	}
	seen := make(map[string]bool, len(t.Aliases))
	for _, a := range t.Aliases {
		if a == "" {
			return fmt.Errorf("template %q: empty alias: %w", t.ID, errdefs.ErrInvalidArgument)
		}
		if seen[a] {
			return fmt.Errorf("template %q: alias %q listed twice: %w", t.ID, a, errdefs.ErrInvalidArgument)
		}
		seen[a] = true
	}
	return nil
}
