package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// selectTemplate reads templates with their aliases folded into a jsonb
// list in one statement, so a record never mixes two versions of its
// aliases and listing needs no query per template.
const selectTemplate = `SELECT t.id, t.backend, t.rootfs_path, t.cpu_count, t.memory_mb,
	t.disk_mb, t.envd_version, t.start_cmd, t.build_id, t.public, t.created_at,
	t.updated_at, t.size_bytes, t.ready_port, t.layers, t.env, t.workdir, t."user",
	t.ready_cmd, t.labels, t.team_id,
	(SELECT coalesce(jsonb_agg(a.alias ORDER BY a.position), '[]')
	   FROM template_aliases a WHERE a.template_id = t.id)
FROM templates t`

const upsertTemplate = `INSERT INTO templates (id, backend, rootfs_path, cpu_count, memory_mb,
	disk_mb, envd_version, start_cmd, build_id, public, created_at, updated_at, size_bytes,
	ready_port, layers, env, workdir, "user", ready_cmd, labels, team_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
ON CONFLICT (id) DO UPDATE SET
	(backend, rootfs_path, cpu_count, memory_mb, disk_mb, envd_version, start_cmd, build_id,
	 public, created_at, updated_at, size_bytes, ready_port, layers, env, workdir, "user",
	 ready_cmd, labels, team_id) =
	(excluded.backend, excluded.rootfs_path, excluded.cpu_count, excluded.memory_mb,
	 excluded.disk_mb, excluded.envd_version, excluded.start_cmd, excluded.build_id,
	 excluded.public, excluded.created_at, excluded.updated_at, excluded.size_bytes,
	 excluded.ready_port, excluded.layers, excluded.env, excluded.workdir, excluded."user",
	 excluded.ready_cmd, excluded.labels, excluded.team_id)`

// templateNames keys the advisory lock every PutTemplate holds: an alias
// must be no other template's alias or id, a rule across two tables that
// no unique index enforces, so the check and the write run one at a time
// across every process.
const templateNames = "warren.template_names"

// PutTemplate implements store.Store. An alias may name only one template,
// and neither an alias nor an id may equal another template's id or alias,
// so GetTemplate always has a single answer.
func (s *Store) PutTemplate(ctx context.Context, t *store.Template) error {
	if err := checkTemplate(t); err != nil {
		return err
	}
	var e encoder
	args := []any{
		t.ID, t.Backend, t.RootfsPath, t.CPUCount, t.MemoryMB,
		t.DiskMB, t.EnvdVersion, t.StartCmd, t.BuildID, t.Public,
		e.time(t.CreatedAt), e.time(t.UpdatedAt), t.SizeBytes, t.ReadyPort,
		e.json(t.Layers, "[]"), e.json(t.Env, "{}"), t.Workdir, t.User, t.ReadyCmd, e.json(t.Labels, "{}"), t.TeamID,
	}
	if e.err != nil {
		return fmt.Errorf("putting template %q: %w", t.ID, e.err)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockName(ctx, tx, templateNames); err != nil {
			return fmt.Errorf("putting template %q: %w", t.ID, err)
		}
		if err := checkAliasConflicts(ctx, tx, t); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, upsertTemplate, args...); err != nil {
			return fmt.Errorf("putting template %q: %w", t.ID, err)
		}
		return replaceAliases(ctx, tx, t)
	})
}

// checkAliasConflicts runs under the templateNames lock, so nothing can
// claim a name between the check and the write.
func checkAliasConflicts(ctx context.Context, tx pgx.Tx, t *store.Template) error {
	var owner string
	err := tx.QueryRow(ctx, `SELECT template_id FROM template_aliases WHERE alias = ANY($1) AND template_id <> $2
		ORDER BY alias = $3 DESC LIMIT 1`, append([]string{t.ID}, t.Aliases...), t.ID, t.ID).Scan(&owner)
	if err == nil {
		return fmt.Errorf("putting template %q: a name of it belongs to template %q: %w", t.ID, owner, errdefs.ErrAlreadyExists)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("putting template %q: checking aliases: %w", t.ID, err)
	}
	if len(t.Aliases) == 0 {
		return nil
	}
	err = tx.QueryRow(ctx, `SELECT id FROM templates WHERE id = ANY($1) AND id <> $2 LIMIT 1`, t.Aliases, t.ID).Scan(&owner)
	if err == nil {
		return fmt.Errorf("putting template %q: alias %q is another template's id: %w", t.ID, owner, errdefs.ErrAlreadyExists)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("putting template %q: checking aliases: %w", t.ID, err)
	}
	return nil
}

func replaceAliases(ctx context.Context, tx pgx.Tx, t *store.Template) error {
	if _, err := tx.Exec(ctx, `DELETE FROM template_aliases WHERE template_id = $1`, t.ID); err != nil {
		return fmt.Errorf("putting template %q: clearing aliases: %w", t.ID, err)
	}
	if len(t.Aliases) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO template_aliases (alias, template_id, position)
		SELECT a, $2, p - 1 FROM unnest($1::text[]) WITH ORDINALITY AS x (a, p)`, t.Aliases, t.ID)
	if isUniqueViolation(err) {
		return fmt.Errorf("putting template %q: alias taken: %w", t.ID, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("putting template %q: adding aliases: %w", t.ID, err)
	}
	return nil
}

// GetTemplate implements store.Store. An id match is preferred; PutTemplate
// keeps ids and aliases from overlapping, so the ORDER BY is only a guard.
func (s *Store) GetTemplate(ctx context.Context, idOrAlias string) (*store.Template, error) {
	row := s.pool.QueryRow(ctx, selectTemplate+`
		WHERE t.id = $1 OR t.id = (SELECT template_id FROM template_aliases WHERE alias = $1)
		ORDER BY t.id = $1 DESC LIMIT 1`, idOrAlias)
	return getOne(row, fmt.Sprintf("template %q", idOrAlias), scanTemplate)
}

// ListTemplates implements store.Store: oldest CreatedAt first, then by id.
func (s *Store) ListTemplates(ctx context.Context) ([]*store.Template, error) {
	rows, err := s.pool.Query(ctx, selectTemplate+" ORDER BY t.created_at NULLS FIRST, t.id")
	return collect(rows, err, "listing templates", scanTemplate)
}

// DeleteTemplate implements store.Store; ON DELETE CASCADE frees the aliases
// and removes the template's builds and tags in the same statement.
func (s *Store) DeleteTemplate(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM templates WHERE id = $1`, id)
	return affectedOne(tag, err, fmt.Sprintf("deleting template %q", id))
}

func scanTemplate(row pgx.Row) (*store.Template, error) {
	var (
		t                            store.Template
		created, updated             *int64
		layers, env, labels, aliases []byte
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
	t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
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
