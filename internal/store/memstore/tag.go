package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// tagKey is a tag's identity: one build per (template, tag).
type tagKey struct {
	template, tag string
}

// SetTag implements store.Store. CreatedAt is when the tag started naming
// its build, so setting it again to the same build keeps the time.
func (m *Store) SetTag(ctx context.Context, templateID, tag, buildID string) error {
	if tag == "" {
		return fmt.Errorf("tagging template %q: empty tag: %w", templateID, errdefs.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	op := fmt.Sprintf("tagging template %q build %q as %q", templateID, buildID, tag)
	if _, ok := m.templates[templateID]; !ok {
		return fmt.Errorf("%s: template %q: %w", op, templateID, errdefs.ErrNotFound)
	}
	b, ok := m.builds[buildID]
	if !ok {
		return fmt.Errorf("%s: build %q: %w", op, buildID, errdefs.ErrNotFound)
	}
	// A tag must never resolve to another template's image.
	if b.TemplateID != templateID {
		return fmt.Errorf("%s: build %q belongs to template %q: %w", op, buildID, b.TemplateID, errdefs.ErrInvalidArgument)
	}
	k := tagKey{templateID, tag}
	if old, ok := m.tags[k]; ok && old.BuildID == buildID {
		return nil
	}
	m.tags[k] = &store.Tag{TemplateID: templateID, Tag: tag, BuildID: buildID, CreatedAt: time.Now().UTC()}
	return nil
}

// DeleteTag implements store.Store.
func (m *Store) DeleteTag(ctx context.Context, templateID, tag string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	k := tagKey{templateID, tag}
	if _, ok := m.tags[k]; !ok {
		return fmt.Errorf("deleting tag %q of template %q: %w", tag, templateID, errdefs.ErrNotFound)
	}
	delete(m.tags, k)
	return nil
}

// ListTags implements store.Store. An unknown template has no tags, which is
// not an error, as in the SQLite store.
func (m *Store) ListTags(ctx context.Context, templateID string) ([]*store.Tag, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	var out []*store.Tag
	for k, t := range m.tags {
		if k.template == templateID {
			c := *t
			out = append(out, &c)
		}
	}
	slices.SortFunc(out, func(a, b *store.Tag) int { return cmp.Compare(a.Tag, b.Tag) })
	return out, nil
}
