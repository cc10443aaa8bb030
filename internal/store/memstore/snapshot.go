package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// CreateSnapshot implements store.Store.
func (m *Store) CreateSnapshot(ctx context.Context, s *store.Snapshot) error {
	if s.ID == "" {
		return fmt.Errorf("snapshot without id: %w", errdefs.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.snapshots[s.ID]; ok {
		return fmt.Errorf("snapshot %q: %w", s.ID, errdefs.ErrAlreadyExists)
	}
	if _, ok := m.snapNames[s.ID]; ok {
		return fmt.Errorf("snapshot id %q is another snapshot's name: %w", s.ID, errdefs.ErrAlreadyExists)
	}
	for _, n := range s.Names {
		if _, ok := m.snapshots[n]; ok {
			return fmt.Errorf("snapshot name %q is another snapshot's id: %w", n, errdefs.ErrAlreadyExists)
		}
	}
	m.snapshots[s.ID] = copySnapshot(s)
	for _, n := range s.Names {
		m.snapNames[n] = s.ID
	}
	return nil
}

// GetSnapshot implements store.Store.
func (m *Store) GetSnapshot(ctx context.Context, idOrName string) (*store.Snapshot, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	s, ok := m.snapshots[idOrName]
	if !ok {
		s, ok = m.snapshots[m.snapNames[idOrName]]
	}
	if !ok {
		return nil, fmt.Errorf("snapshot %q: %w", idOrName, errdefs.ErrNotFound)
	}
	return m.withNames(s), nil
}

// ListSnapshots implements store.Store.
func (m *Store) ListSnapshots(ctx context.Context) ([]*store.Snapshot, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	out := make([]*store.Snapshot, 0, len(m.snapshots))
	for _, s := range m.snapshots {
		out = append(out, m.withNames(s))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// DeleteSnapshot implements store.Store.
func (m *Store) DeleteSnapshot(ctx context.Context, id string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.snapshots[id]; !ok {
		return fmt.Errorf("snapshot %s: %w", id, errdefs.ErrNotFound)
	}
	delete(m.snapshots, id)
	maps.DeleteFunc(m.snapNames, func(_, sid string) bool { return sid == id })
	return nil
}

// withNames copies s with the names that point at it now, sorted.
func (m *Store) withNames(s *store.Snapshot) *store.Snapshot {
	cp := copySnapshot(s)
	cp.Names = nil
	for n, id := range m.snapNames {
		if id == s.ID {
			cp.Names = append(cp.Names, n)
		}
	}
	slices.Sort(cp.Names)
	return cp
}

func copySnapshot(s *store.Snapshot) *store.Snapshot {
	cp := *s
	cp.Names = slices.Clone(s.Names)
	cp.Layers = slices.Clone(s.Layers)
	cp.EnvVars = maps.Clone(s.EnvVars)
	cp.CreatedAt = s.CreatedAt.UTC()
	return &cp
}
