package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// upsertTag creates a tag or moves it in one statement, so two processes
// moving one tag at once serialize on its row. CreatedAt is when the tag
// started naming its build: setting it again to the same build keeps it.
const upsertTag = `INSERT INTO template_tags AS t (template_id, tag, build_id, created_at)
VALUES (?, ?, ?, ?)
ON CONFLICT (template_id, tag) DO UPDATE SET
	created_at = CASE WHEN t.build_id = excluded.build_id THEN t.created_at ELSE excluded.created_at END,
	build_id = excluded.build_id`

// SetTag implements store.Store. The checks lock the template's and the
// build's rows until the write commits, so neither can be deleted in
// between by another process.
func (s *Store) SetTag(ctx context.Context, templateID, tag, buildID string) error {
	if tag == "" {
		return fmt.Errorf("tagging template %q: empty tag: %w", templateID, errdefs.ErrInvalidArgument)
	}
	op := fmt.Sprintf("tagging template %q build %q as %q", templateID, buildID, tag)
	now, err := s.d.Time(time.Now())
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return s.db.InTx(ctx, func(tx Conn) error {
		if err := s.checkTagTarget(ctx, tx, templateID, buildID); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if _, err := tx.Exec(ctx, upsertTag, templateID, tag, buildID, now); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		return nil
	})
}

// checkTagTarget requires the template and the build to exist and the build
// to be the template's: a tag must never resolve to another template's image.
func (s *Store) checkTagTarget(ctx context.Context, tx Conn, templateID, buildID string) error {
	var one int
	err := tx.QueryRow(ctx, "SELECT 1 FROM templates WHERE id = ?"+s.d.Lock(LockShare), templateID).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return fmt.Errorf("template %q: %w", templateID, errdefs.ErrNotFound)
	}
	if err != nil {
		return err
	}
	var owner string
	err = tx.QueryRow(ctx, "SELECT template_id FROM builds WHERE id = ?"+s.d.Lock(LockShare), buildID).Scan(&owner)
	if errors.Is(err, ErrNoRows) {
		return fmt.Errorf("build %q: %w", buildID, errdefs.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if owner != templateID {
		return fmt.Errorf("build %q belongs to template %q: %w", buildID, owner, errdefs.ErrInvalidArgument)
	}
	return nil
}

// DeleteTag implements store.Store.
func (s *Store) DeleteTag(ctx context.Context, templateID, tag string) error {
	n, err := s.db.Exec(ctx, "DELETE FROM template_tags WHERE template_id = ? AND tag = ?", templateID, tag)
	return affected(n, err, fmt.Sprintf("deleting tag %q of template %q", tag, templateID))
}

// ListTags implements store.Store. An unknown template has no tags, which is
// not an error: callers list after resolving the template anyway.
func (s *Store) ListTags(ctx context.Context, templateID string) ([]*store.Tag, error) {
	rows, err := s.db.Query(ctx, `SELECT template_id, tag, build_id, created_at
		FROM template_tags WHERE template_id = ? ORDER BY tag`, templateID)
	return collect(rows, err, fmt.Sprintf("listing tags of template %q", templateID), func(row Row) (*store.Tag, error) {
		var (
			t       store.Tag
			created timeCol
		)
		if err := row.Scan(&t.TemplateID, &t.Tag, &t.BuildID, &created); err != nil {
			return nil, err
		}
		t.CreatedAt = created.t
		return &t, nil
	})
}
