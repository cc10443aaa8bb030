package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// CreateBuild implements store.Store.
func (m *Store) CreateBuild(ctx context.Context, b *store.Build) error {
	if err := checkBuild(b); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.builds[b.ID]; ok {
		return fmt.Errorf("creating build %q: %w", b.ID, errdefs.ErrAlreadyExists)
	}
	if _, ok := m.templates[b.TemplateID]; !ok {
		return fmt.Errorf("creating build %q: template %q: %w", b.ID, b.TemplateID, errdefs.ErrNotFound)
	}
	m.builds[b.ID] = cloneBuild(b)
	return nil
}

// GetBuild implements store.Store.
func (m *Store) GetBuild(ctx context.Context, id string) (*store.Build, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	b, ok := m.builds[id]
	if !ok {
		return nil, fmt.Errorf("build %q: %w", id, errdefs.ErrNotFound)
	}
	return cloneBuild(b), nil
}

// UpdateBuild implements store.Store. A build never moves to another
// template, or the tags pointing at it would cross templates, so changing
// TemplateID is refused with ErrInvalidArgument.
func (m *Store) UpdateBuild(ctx context.Context, b *store.Build) error {
	if err := checkBuild(b); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	old, ok := m.builds[b.ID]
	if !ok {
		return fmt.Errorf("updating build %q: %w", b.ID, errdefs.ErrNotFound)
	}
	if old.TemplateID != b.TemplateID {
		return fmt.Errorf("updating build %q: it belongs to template %q, not %q: %w",
			b.ID, old.TemplateID, b.TemplateID, errdefs.ErrInvalidArgument)
	}
	m.builds[b.ID] = cloneBuild(b)
	return nil
}

// ListBuilds implements store.Store: newest CreatedAt first, then by id so
// the order is stable when creation times tie.
func (m *Store) ListBuilds(ctx context.Context, templateID string) ([]*store.Build, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	out := make([]*store.Build, 0, len(m.builds))
	for _, b := range m.builds {
		if templateID == "" || b.TemplateID == templateID {
			out = append(out, cloneBuild(b))
		}
	}
	slices.SortFunc(out, func(a, b *store.Build) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

func checkBuild(b *store.Build) error {
	if b == nil || b.ID == "" {
		return fmt.Errorf("build without id: %w", errdefs.ErrInvalidArgument)
	}
	return nil
}

// cloneBuild returns a deep copy in the shape the SQLite store reads back:
// times in UTC, empty collections and Request as nil.
func cloneBuild(b *store.Build) *store.Build {
	c := *b
	c.Request = nil
	if len(b.Request) > 0 {
		c.Request = slices.Clone(b.Request)
	}
	c.Tags = cloneList(b.Tags)
	c.Layers = cloneList(b.Layers)
	c.Env = cloneMap(b.Env)
	c.Labels = cloneMap(b.Labels)
	c.CreatedAt = b.CreatedAt.UTC()
	c.FinishedAt = b.FinishedAt.UTC()
	return &c
}
