package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// upsertTag creates a tag or moves it. CreatedAt is when the tag started
// naming its build, so setting it again to the same build keeps the time.
const upsertTag = `INSERT INTO template_tags (template_id, tag, build_id, created_at)
VALUES (?, ?, ?, ?)
ON CONFLICT (template_id, tag) DO UPDATE SET
	created_at = CASE WHEN build_id = excluded.build_id THEN created_at ELSE excluded.created_at END,
	build_id = excluded.build_id`

// SetTag implements store.Store. The checks and the write share one write
// transaction, so a build can't be deleted in between.
func (s *Store) SetTag(ctx context.Context, templateID, tag, buildID string) error {
	if tag == "" {
		return fmt.Errorf("tagging template %q: empty tag: %w", templateID, errdefs.ErrInvalidArgument)
	}
	op := fmt.Sprintf("tagging template %q build %q as %q", templateID, buildID, tag)
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkTagTarget(ctx, tx, templateID, buildID); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		_, err := tx.ExecContext(ctx, upsertTag, templateID, tag, buildID, formatTime(time.Now()))
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		return nil
	})
}

// checkTagTarget requires the template and the build to exist and the build
// to be the template's: a tag must never resolve to another template's image.
func checkTagTarget(ctx context.Context, tx *sql.Tx, templateID, buildID string) error {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM templates WHERE id = ?", templateID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("template %q: %w", templateID, errdefs.ErrNotFound)
	}
	if err != nil {
		return err
	}
	var owner string
	err = tx.QueryRowContext(ctx, "SELECT template_id FROM builds WHERE id = ?", buildID).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
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
	res, err := s.db.ExecContext(ctx,
		"DELETE FROM template_tags WHERE template_id = ? AND tag = ?", templateID, tag)
	op := fmt.Sprintf("deleting tag %q of template %q", tag, templateID)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return checkAffected(res, op)
}

// ListTags implements store.Store. An unknown template has no tags, which is
// not an error: callers list after resolving the template anyway.
func (s *Store) ListTags(ctx context.Context, templateID string) ([]*store.Tag, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT template_id, tag, build_id, created_at
		FROM template_tags WHERE template_id = ? ORDER BY tag`, templateID)
	if err != nil {
		return nil, fmt.Errorf("listing tags of template %q: %w", templateID, err)
	}
	defer rows.Close()
	var out []*store.Tag
	for rows.Next() {
		var (
			t         store.Tag
			createdAt string
		)
		if err := rows.Scan(&t.TemplateID, &t.Tag, &t.BuildID, &createdAt); err != nil {
			return nil, fmt.Errorf("listing tags of template %q: %w", templateID, err)
		}
		if t.CreatedAt, err = parseTime(createdAt); err != nil {
			return nil, fmt.Errorf("listing tags of template %q: %w", templateID, err)
		}
		out = append(out, &t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tags of template %q: %w", templateID, err)
	}
	return out, nil
}
