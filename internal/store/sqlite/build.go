package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// buildCols is the column order shared by buildArgs and scanBuild; id and
// template_id must stay first because UPDATE moves them to the WHERE clause.
var buildCols = []string{
	"id", "template_id", "status", "reason", "reason_step", "request", "tags",
	"created_at", "finished_at", "layers", "env", "workdir", "user",
	"start_cmd", "ready_cmd", "labels", "cpu_count", "memory_mb", "size_bytes",
}

var (
	selectBuild = "SELECT " + strings.Join(buildCols, ", ") + " FROM builds"
	insertBuild = "INSERT INTO builds (" + strings.Join(buildCols, ", ") +
		") VALUES (" + placeholders(len(buildCols)) + ")"
	// updateBuild matches the template too: a build never moves to another
	// template, or the tags pointing at it would cross templates.
	updateBuild = "UPDATE builds SET " + strings.Join(buildCols[2:], " = ?, ") +
		" = ? WHERE id = ? AND template_id = ?"
)

// CreateBuild implements store.Store. The foreign key on template_id does the
// existence check, so it holds even against a concurrent DeleteTemplate.
func (s *Store) CreateBuild(ctx context.Context, b *store.Build) error {
	args, err := buildArgs(b)
	if err != nil {
		return fmt.Errorf("creating build: %w", err)
	}
	_, err = s.db.ExecContext(ctx, insertBuild, args...)
	switch {
	case isUniqueViolation(err):
		return fmt.Errorf("creating build %q: %w", b.ID, errdefs.ErrAlreadyExists)
	case isForeignKeyViolation(err):
		return fmt.Errorf("creating build %q: template %q: %w", b.ID, b.TemplateID, errdefs.ErrNotFound)
	case err != nil:
		return fmt.Errorf("creating build %q: %w", b.ID, err)
	}
	return nil
}

// GetBuild implements store.Store.
func (s *Store) GetBuild(ctx context.Context, id string) (*store.Build, error) {
	b, err := scanBuild(s.db.QueryRowContext(ctx, selectBuild+" WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("build %q: %w", id, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("getting build %q: %w", id, err)
	}
	return b, nil
}

// UpdateBuild implements store.Store. Changing a build's TemplateID is
// refused with ErrInvalidArgument (see updateBuild).
func (s *Store) UpdateBuild(ctx context.Context, b *store.Build) error {
	args, err := buildArgs(b)
	if err != nil {
		return fmt.Errorf("updating build: %w", err)
	}
	// Columns after id and template_id, then those two for the WHERE clause.
	args = append(args[2:], args[0], args[1])
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, updateBuild, args...)
		if err != nil {
			return fmt.Errorf("updating build %q: %w", b.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		// No row matched: tell a missing build from one of another template.
		var owner string
		err = tx.QueryRowContext(ctx, "SELECT template_id FROM builds WHERE id = ?", b.ID).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("updating build %q: %w", b.ID, errdefs.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("updating build %q: %w", b.ID, err)
		}
		return fmt.Errorf("updating build %q: it belongs to template %q, not %q: %w",
			b.ID, owner, b.TemplateID, errdefs.ErrInvalidArgument)
	})
}

// ListBuilds implements store.Store: newest CreatedAt first, then by id so
// the order is stable when creation times tie.
func (s *Store) ListBuilds(ctx context.Context, templateID string) ([]*store.Build, error) {
	const order = " ORDER BY created_at DESC, id"
	var (
		rows *sql.Rows
		err  error
	)
	// Two statements rather than "? = '' OR template_id = ?", which would
	// keep SQLite from using the per-template index.
	if templateID == "" {
		rows, err = s.db.QueryContext(ctx, selectBuild+order)
	} else {
		rows, err = s.db.QueryContext(ctx, selectBuild+" WHERE template_id = ?"+order, templateID)
	}
	if err != nil {
		return nil, fmt.Errorf("listing builds: %w", err)
	}
	defer rows.Close()
	var out []*store.Build
	for rows.Next() {
		b, err := scanBuild(rows)
		if err != nil {
			return nil, fmt.Errorf("listing builds: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing builds: %w", err)
	}
	return out, nil
}

// buildArgs returns b's values in buildCols order.
func buildArgs(b *store.Build) ([]any, error) {
	if b == nil || b.ID == "" {
		return nil, fmt.Errorf("build without id: %w", errdefs.ErrInvalidArgument)
	}
	tags, err := encodeList(b.Tags)
	if err != nil {
		return nil, err
	}
	layers, err := encodeList(b.Layers)
	if err != nil {
		return nil, err
	}
	env, err := encodeMap(b.Env)
	if err != nil {
		return nil, err
	}
	labels, err := encodeMap(b.Labels)
	if err != nil {
		return nil, err
	}
	var request any // NULL when absent
	if len(b.Request) > 0 {
		request = b.Request
	}
	return []any{
		b.ID, b.TemplateID, b.Status, b.Reason, b.ReasonStep, request, tags,
		formatTime(b.CreatedAt), formatTime(b.FinishedAt), layers, env, b.Workdir, b.User,
		b.StartCmd, b.ReadyCmd, labels, b.CPUCount, b.MemoryMB, b.SizeBytes,
	}, nil
}

// scanBuild decodes one row selected with buildCols.
func scanBuild(sc scanner) (*store.Build, error) {
	var (
		b                     store.Build
		tags, layers          string
		env, labels           string
		createdAt, finishedAt string
		request               []byte
	)
	err := sc.Scan(
		&b.ID, &b.TemplateID, &b.Status, &b.Reason, &b.ReasonStep, &request, &tags,
		&createdAt, &finishedAt, &layers, &env, &b.Workdir, &b.User,
		&b.StartCmd, &b.ReadyCmd, &labels, &b.CPUCount, &b.MemoryMB, &b.SizeBytes,
	)
	if err != nil {
		return nil, err
	}
	if len(request) > 0 {
		b.Request = request
	}
	if b.Tags, err = decodeList(tags); err != nil {
		return nil, err
	}
	if b.Layers, err = decodeList(layers); err != nil {
		return nil, err
	}
	if b.Env, err = decodeMap(env); err != nil {
		return nil, err
	}
	if b.Labels, err = decodeMap(labels); err != nil {
		return nil, err
	}
	if b.CreatedAt, err = parseTime(createdAt); err != nil {
		return nil, err
	}
	if b.FinishedAt, err = parseTime(finishedAt); err != nil {
		return nil, err
	}
	return &b, nil
}
