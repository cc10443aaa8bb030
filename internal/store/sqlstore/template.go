package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// selectTemplate reads templates with their aliases folded into a JSON
// list in one statement, so a record never mixes two versions of its
// aliases and listing needs no query per template.
func (s *Store) selectTemplate() string {
	return `SELECT t.id, t.backend, t.rootfs_path, t.cpu_count, t.memory_mb,
	t.disk_mb, t.envd_version, t.start_cmd, t.build_id, t.public, t.created_at,
	t.updated_at, t.size_bytes, t.ready_port, t.layers, t.env, t.workdir, t."user",
	t.ready_cmd, t.labels, t.team_id,
	(SELECT ` + s.d.JSONList("a.alias", "a.position") + `
	   FROM template_aliases a WHERE a.template_id = t.id)
FROM templates t`
}

const upsertTemplate = `INSERT INTO templates (id, backend, rootfs_path, cpu_count, memory_mb,
	disk_mb, envd_version, start_cmd, build_id, public, created_at, updated_at, size_bytes,
	ready_port, layers, env, workdir, "user", ready_cmd, labels, team_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	backend = excluded.backend, rootfs_path = excluded.rootfs_path,
	cpu_count = excluded.cpu_count, memory_mb = excluded.memory_mb,
	disk_mb = excluded.disk_mb, envd_version = excluded.envd_version,
	start_cmd = excluded.start_cmd, build_id = excluded.build_id,
	public = excluded.public, created_at = excluded.created_at,
	updated_at = excluded.updated_at, size_bytes = excluded.size_bytes,
	ready_port = excluded.ready_port, layers = excluded.layers,
	env = excluded.env, workdir = excluded.workdir, "user" = excluded."user",
	ready_cmd = excluded.ready_cmd, labels = excluded.labels, team_id = excluded.team_id`

// templateNames is the name PutTemplate locks (Dialect.LockName): an alias
// must be no other template's alias or id, a rule across two tables that
// no unique index enforces, so the check and the write run one at a time.
const templateNames = "warren.template_names"

// PutTemplate implements store.Store. An alias may name only one template,
// and neither an alias nor an id may equal another template's id or alias,
// so GetTemplate always has a single answer.
func (s *Store) PutTemplate(ctx context.Context, t *store.Template) error {
	if err := checkTemplate(t); err != nil {
		return err
	}
	e := s.enc()
	args := []any{
		t.ID, t.Backend, t.RootfsPath, t.CPUCount, t.MemoryMB,
		t.DiskMB, t.EnvdVersion, t.StartCmd, t.BuildID, t.Public,
		e.time(t.CreatedAt), e.time(t.UpdatedAt), t.SizeBytes, t.ReadyPort,
		e.json(t.Layers, "[]"), e.json(t.Env, "{}"), t.Workdir, t.User, t.ReadyCmd, e.json(t.Labels, "{}"), t.TeamID,
	}
	if e.err != nil {
		return fmt.Errorf("putting template %q: %w", t.ID, e.err)
	}
	return s.db.InTx(ctx, func(tx Conn) error {
		if err := s.d.LockName(ctx, tx, templateNames); err != nil {
			return fmt.Errorf("putting template %q: %w", t.ID, err)
		}
		if err := checkAliasConflicts(ctx, tx, t); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, upsertTemplate, args...); err != nil {
			return fmt.Errorf("putting template %q: %w", t.ID, err)
		}
		return s.replaceAliases(ctx, tx, t)
	})
}

// checkAliasConflicts runs under the templateNames lock, so nothing can
// claim a name between the check and the write.
func checkAliasConflicts(ctx context.Context, tx Conn, t *store.Template) error {
	names := append([]string{t.ID}, t.Aliases...)
	var owner string
	err := tx.QueryRow(ctx, `SELECT template_id FROM template_aliases WHERE alias IN (`+marks(len(names))+`)
		AND template_id <> ? ORDER BY alias = ? DESC LIMIT 1`, append(anyArgs(names), t.ID, t.ID)...).Scan(&owner)
	if err == nil {
		return fmt.Errorf("putting template %q: a name of it belongs to template %q: %w", t.ID, owner, errdefs.ErrAlreadyExists)
	}
	if !errors.Is(err, ErrNoRows) {
		return fmt.Errorf("putting template %q: checking aliases: %w", t.ID, err)
	}
	if len(t.Aliases) == 0 {
		return nil
	}
	err = tx.QueryRow(ctx, `SELECT id FROM templates WHERE id IN (`+marks(len(t.Aliases))+`) AND id <> ? LIMIT 1`,
		append(anyArgs(t.Aliases), t.ID)...).Scan(&owner)
	if err == nil {
		return fmt.Errorf("putting template %q: alias %q is another template's id: %w", t.ID, owner, errdefs.ErrAlreadyExists)
	}
	if !errors.Is(err, ErrNoRows) {
		return fmt.Errorf("putting template %q: checking aliases: %w", t.ID, err)
	}
	return nil
}

func (s *Store) replaceAliases(ctx context.Context, tx Conn, t *store.Template) error {
	if _, err := tx.Exec(ctx, `DELETE FROM template_aliases WHERE template_id = ?`, t.ID); err != nil {
		return fmt.Errorf("putting template %q: clearing aliases: %w", t.ID, err)
	}
	for i, a := range t.Aliases {
		_, err := tx.Exec(ctx, `INSERT INTO template_aliases (alias, template_id, position) VALUES (?, ?, ?)`, a, t.ID, i)
		if s.d.IsUniqueViolation(err) {
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
	row := s.db.QueryRow(ctx, s.selectTemplate()+`
		WHERE t.id = ? OR t.id = (SELECT template_id FROM template_aliases WHERE alias = ?)
		ORDER BY t.id = ? DESC LIMIT 1`, idOrAlias, idOrAlias, idOrAlias)
	return getOne(row, fmt.Sprintf("template %q", idOrAlias), scanTemplate)
}

// ListTemplates implements store.Store: oldest CreatedAt first, then by id.
func (s *Store) ListTemplates(ctx context.Context) ([]*store.Template, error) {
	rows, err := s.db.Query(ctx, s.selectTemplate()+" ORDER BY t.created_at NULLS FIRST, t.id")
	return collect(rows, err, "listing templates", scanTemplate)
}

// DeleteTemplate implements store.Store; ON DELETE CASCADE frees the aliases
// and removes the template's builds and tags in the same statement.
func (s *Store) DeleteTemplate(ctx context.Context, id string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM templates WHERE id = ?`, id)
	return affected(n, err, fmt.Sprintf("deleting template %q", id))
}

func scanTemplate(row Row) (*store.Template, error) {
	var (
		t                            store.Template
		created, updated             timeCol
		layers, env, labels, aliases jsonCol
	)
	err := row.Scan(&t.ID, &t.Backend, &t.RootfsPath, &t.CPUCount, &t.MemoryMB,
		&t.DiskMB, &t.EnvdVersion, &t.StartCmd, &t.BuildID, &t.Public, &created,
		&updated, &t.SizeBytes, &t.ReadyPort, &layers, &env, &t.Workdir, &t.User,
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
	if t.Aliases, err = decodeList(aliases); err != nil {
		return nil, fmt.Errorf("decoding aliases of template %q: %w", t.ID, err)
	}
	t.CreatedAt, t.UpdatedAt = created.t, updated.t
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
