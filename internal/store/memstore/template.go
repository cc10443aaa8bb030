package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// PutTemplate implements store.Store. An alias may name only one template,
// and neither an alias nor an id may equal another template's id or alias,
// so GetTemplate always has a single answer.
func (m *Store) PutTemplate(ctx context.Context, t *store.Template) error {
	if err := checkTemplate(t); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if owner, ok := m.aliases[t.ID]; ok && owner != t.ID {
		return fmt.Errorf("putting template %q: id is an alias of template %q: %w", t.ID, owner, errdefs.ErrAlreadyExists)
	}
	for _, a := range t.Aliases {
		if owner, ok := m.aliases[a]; ok && owner != t.ID {
			return fmt.Errorf("putting template %q: alias %q belongs to template %q: %w", t.ID, a, owner, errdefs.ErrAlreadyExists)
		}
		if _, ok := m.templates[a]; ok && a != t.ID {
			return fmt.Errorf("putting template %q: alias %q is another template's id: %w", t.ID, a, errdefs.ErrAlreadyExists)
		}
	}
	if old, ok := m.templates[t.ID]; ok {
		for _, a := range old.Aliases {
			delete(m.aliases, a)
		}
	}
	for _, a := range t.Aliases {
		m.aliases[a] = t.ID
	}
	m.templates[t.ID] = cloneTemplate(t)
	return nil
}

// GetTemplate implements store.Store. Ids are tried before aliases; PutTemplate
// keeps the two from overlapping, so the order only saves a lookup.
func (m *Store) GetTemplate(ctx context.Context, idOrAlias string) (*store.Template, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	t, ok := m.templates[idOrAlias]
	if !ok {
		t, ok = m.templates[m.aliases[idOrAlias]]
	}
	if !ok {
		return nil, fmt.Errorf("template %q: %w", idOrAlias, errdefs.ErrNotFound)
	}
	return cloneTemplate(t), nil
}

// ListTemplates implements store.Store: oldest CreatedAt first, then by id.
func (m *Store) ListTemplates(ctx context.Context) ([]*store.Template, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	out := make([]*store.Template, 0, len(m.templates))
	for _, t := range m.templates {
		out = append(out, cloneTemplate(t))
	}
	slices.SortFunc(out, func(a, b *store.Template) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// DeleteTemplate implements store.Store; the template's aliases are freed
// and its builds and tags go with it, as SQLite's ON DELETE CASCADE does.
func (m *Store) DeleteTemplate(ctx context.Context, id string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	t, ok := m.templates[id]
	if !ok {
		return fmt.Errorf("deleting template %q: %w", id, errdefs.ErrNotFound)
	}
	for _, a := range t.Aliases {
		delete(m.aliases, a)
	}
	delete(m.templates, id)
	maps.DeleteFunc(m.builds, func(_ string, b *store.Build) bool { return b.TemplateID == id })
	maps.DeleteFunc(m.tags, func(k tagKey, _ *store.Tag) bool { return k.template == id })
	return nil
}

// checkTemplate rejects what no store could keep faithfully: a missing id,
// an empty alias, or one alias listed twice.
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

func cloneTemplate(t *store.Template) *store.Template {
	c := *t
	c.Aliases = nil
	if len(t.Aliases) > 0 {
		c.Aliases = slices.Clone(t.Aliases)
	}
	c.Layers = cloneList(t.Layers)
	c.Env = cloneMap(t.Env)
	c.Labels = cloneMap(t.Labels)
	c.CreatedAt = t.CreatedAt.UTC()
	c.UpdatedAt = t.UpdatedAt.UTC()
	return &c
}
