package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// buildCols is the column order shared by buildArgs and scanBuild; id and
// template_id stay first because UPDATE matches on them ($1, $2).
var buildCols = []string{
	"id", "template_id", "status", "reason", "reason_step", "request", "tags",
	"created_at", "finished_at", "layers", "env", "workdir", `"user"`,
	"start_cmd", "ready_cmd", "labels", "cpu_count", "memory_mb", "size_bytes",
}

var (
	selectBuild = "SELECT " + strings.Join(buildCols, ", ") + " FROM builds"
	insertBuild = "INSERT INTO builds (" + strings.Join(buildCols, ", ") +
		") VALUES (" + placeholders(1, len(buildCols)) + ")"
	// updateBuild matches the template too: a build never moves to another
	// template, or the tags pointing at it would cross templates.
	updateBuild = "UPDATE builds SET (" + strings.Join(buildCols[2:], ", ") +
		") = (" + placeholders(3, len(buildCols)-2) + ") WHERE id = $1 AND template_id = $2"
)

// CreateBuild implements store.Store. The foreign key on template_id does
// the existence check, so it holds against a concurrent DeleteTemplate.
func (s *Store) CreateBuild(ctx context.Context, b *store.Build) error {
	args, err := buildArgs(b)
	if err != nil {
		return fmt.Errorf("creating build: %w", err)
	}
	_, err = s.pool.Exec(ctx, insertBuild, args...)
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
	return getOne(s.pool.QueryRow(ctx, selectBuild+" WHERE id = $1", id), fmt.Sprintf("build %q", id), scanBuild)
}

// UpdateBuild implements store.Store. Changing a build's TemplateID is
// refused with ErrInvalidArgument (see updateBuild).
func (s *Store) UpdateBuild(ctx context.Context, b *store.Build) error {
	args, err := buildArgs(b)
	if err != nil {
		return fmt.Errorf("updating build: %w", err)
	}
	tag, err := s.pool.Exec(ctx, updateBuild, args...)
	if err != nil {
		return fmt.Errorf("updating build %q: %w", b.ID, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	// No row matched: tell a missing build from one of another template.
	var owner string
	err = s.pool.QueryRow(ctx, "SELECT template_id FROM builds WHERE id = $1", b.ID).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("updating build %q: %w", b.ID, errdefs.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("updating build %q: %w", b.ID, err)
	}
	return fmt.Errorf("updating build %q: it belongs to template %q, not %q: %w",
		b.ID, owner, b.TemplateID, errdefs.ErrInvalidArgument)
}

// ListBuilds implements store.Store: newest CreatedAt first, then by id.
func (s *Store) ListBuilds(ctx context.Context, templateID string) ([]*store.Build, error) {
	const order = " ORDER BY created_at DESC NULLS LAST, id"
	var (
		rows pgx.Rows
		err  error
	)
	// Two statements rather than "$1 = '' OR template_id = $1", which
	// would keep the planner off the per-template index.
	if templateID == "" {
		rows, err = s.pool.Query(ctx, selectBuild+order)
	} else {
		rows, err = s.pool.Query(ctx, selectBuild+" WHERE template_id = $1"+order, templateID)
	}
	return collect(rows, err, "listing builds", scanBuild)
}

// buildArgs returns b's values in buildCols order.
func buildArgs(b *store.Build) ([]any, error) {
	if b == nil || b.ID == "" {
		return nil, fmt.Errorf("build without id: %w", errdefs.ErrInvalidArgument)
	}
	var request []byte // NULL when absent
	if len(b.Request) > 0 {
		request = b.Request
	}
	var e encoder
	args := []any{
		b.ID, b.TemplateID, b.Status, b.Reason, b.ReasonStep, request, e.json(b.Tags, "[]"),
		e.time(b.CreatedAt), e.time(b.FinishedAt), e.json(b.Layers, "[]"), e.json(b.Env, "{}"), b.Workdir, b.User,
		b.StartCmd, b.ReadyCmd, e.json(b.Labels, "{}"), b.CPUCount, b.MemoryMB, b.SizeBytes,
	}
	return args, e.err
}

// scanBuild decodes one row selected with buildCols.
func scanBuild(row pgx.Row) (*store.Build, error) {
	var (
		b                 store.Build
		tags, layers      []byte
		env, labels       []byte
		created, finished *int64
	)
	err := row.Scan(
		&b.ID, &b.TemplateID, &b.Status, &b.Reason, &b.ReasonStep, &b.Request, &tags,
		&created, &finished, &layers, &env, &b.Workdir, &b.User,
		&b.StartCmd, &b.ReadyCmd, &labels, &b.CPUCount, &b.MemoryMB, &b.SizeBytes,
	)
	if err != nil {
		return nil, err
	}
	if len(b.Request) == 0 {
		b.Request = nil
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
	b.CreatedAt, b.FinishedAt = fromNanos(created), fromNanos(finished)
	return &b, nil
}
