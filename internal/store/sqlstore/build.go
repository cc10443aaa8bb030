package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// buildCols is the column order shared by buildArgs and scanBuild; id and
// template_id stay first because UPDATE moves them to the WHERE clause.
var buildCols = []string{
	"id", "template_id", "status", "reason", "reason_step", "request", "tags",
	"created_at", "finished_at", "layers", "env", "workdir", `"user"`,
	"start_cmd", "ready_cmd", "labels", "cpu_count", "memory_mb", "size_bytes",
}

var (
	selectBuild = "SELECT " + strings.Join(buildCols, ", ") + " FROM builds"
	insertBuild = "INSERT INTO builds (" + strings.Join(buildCols, ", ") +
		") VALUES (" + marks(len(buildCols)) + ")"
	// updateBuild matches the template too: a build never moves to another
	// template, or the tags pointing at it would cross templates.
	updateBuild = "UPDATE builds SET " + strings.Join(buildCols[2:], " = ?, ") +
		" = ? WHERE id = ? AND template_id = ?"
)

// CreateBuild implements store.Store. The foreign key on template_id does
// the existence check, so it holds against a concurrent DeleteTemplate.
func (s *Store) CreateBuild(ctx context.Context, b *store.Build) error {
	args, err := s.buildArgs(b)
	if err != nil {
		return fmt.Errorf("creating build: %w", err)
	}
	_, err = s.db.Exec(ctx, insertBuild, args...)
	switch {
	case s.d.IsUniqueViolation(err):
		return fmt.Errorf("creating build %q: %w", b.ID, errdefs.ErrAlreadyExists)
	case s.d.IsForeignKeyViolation(err):
		return fmt.Errorf("creating build %q: template %q: %w", b.ID, b.TemplateID, errdefs.ErrNotFound)
	case err != nil:
		return fmt.Errorf("creating build %q: %w", b.ID, err)
	}
	return nil
}

// GetBuild implements store.Store.
func (s *Store) GetBuild(ctx context.Context, id string) (*store.Build, error) {
	return getOne(s.db.QueryRow(ctx, selectBuild+" WHERE id = ?", id), fmt.Sprintf("build %q", id), scanBuild)
}

// UpdateBuild implements store.Store. Changing a build's TemplateID is
// refused with ErrInvalidArgument (see updateBuild).
func (s *Store) UpdateBuild(ctx context.Context, b *store.Build) error {
	args, err := s.buildArgs(b)
	if err != nil {
		return fmt.Errorf("updating build: %w", err)
	}
	args = append(args[2:], args[0], args[1])
	return s.db.InTx(ctx, func(tx Conn) error {
		n, err := tx.Exec(ctx, updateBuild, args...)
		if err != nil {
			return fmt.Errorf("updating build %q: %w", b.ID, err)
		}
		if n > 0 {
			return nil
		}
		// No row matched: tell a missing build from one of another template.
		var owner string
		err = tx.QueryRow(ctx, "SELECT template_id FROM builds WHERE id = ?", b.ID).Scan(&owner)
		if errors.Is(err, ErrNoRows) {
			return fmt.Errorf("updating build %q: %w", b.ID, errdefs.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("updating build %q: %w", b.ID, err)
		}
		return fmt.Errorf("updating build %q: it belongs to template %q, not %q: %w",
			b.ID, owner, b.TemplateID, errdefs.ErrInvalidArgument)
	})
}

// ListBuilds implements store.Store: newest CreatedAt first, then by id.
func (s *Store) ListBuilds(ctx context.Context, templateID string) ([]*store.Build, error) {
	const order = " ORDER BY created_at DESC NULLS LAST, id"
	var (
		rows Rows
		err  error
	)
	// Two statements rather than "? = '' OR template_id = ?", which
	// would keep the planner off the per-template index.
	if templateID == "" {
		rows, err = s.db.Query(ctx, selectBuild+order)
	} else {
		rows, err = s.db.Query(ctx, selectBuild+" WHERE template_id = ?"+order, templateID)
	}
	return collect(rows, err, "listing builds", scanBuild)
}

// buildArgs returns b's values in buildCols order.
func (s *Store) buildArgs(b *store.Build) ([]any, error) {
	if b == nil || b.ID == "" {
		return nil, fmt.Errorf("build without id: %w", errdefs.ErrInvalidArgument)
	}
	var request any // NULL when absent
	if len(b.Request) > 0 {
		request = b.Request
	}
	e := s.enc()
	args := []any{
		b.ID, b.TemplateID, b.Status, b.Reason, b.ReasonStep, request, e.json(b.Tags, "[]"),
		e.time(b.CreatedAt), e.time(b.FinishedAt), e.json(b.Layers, "[]"), e.json(b.Env, "{}"), b.Workdir, b.User,
		b.StartCmd, b.ReadyCmd, e.json(b.Labels, "{}"), b.CPUCount, b.MemoryMB, b.SizeBytes,
	}
	return args, e.err
}

// scanBuild decodes one row selected with buildCols.
func scanBuild(row Row) (*store.Build, error) {
	var (
		b                 store.Build
		tags, layers      jsonCol
		env, labels       jsonCol
		created, finished timeCol
		request           []byte
	)
	err := row.Scan(
		&b.ID, &b.TemplateID, &b.Status, &b.Reason, &b.ReasonStep, &request, &tags,
		&created, &finished, &layers, &env, &b.Workdir, &b.User,
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
	b.CreatedAt, b.FinishedAt = created.t, finished.t
	return &b, nil
}
