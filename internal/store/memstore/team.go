package memstore

import (
	"context"
	"fmt"
	"sort"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// GetTeam implements store.Store.
func (m *Store) GetTeam(ctx context.Context, id string) (*store.Team, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.teams[id]
	if !ok {
		return nil, fmt.Errorf("team %q: %w", id, errdefs.ErrNotFound)
	}
	return &t, nil
}

// PutTeam implements store.Store.
func (m *Store) PutTeam(ctx context.Context, t *store.Team) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("team without id: %w", errdefs.ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.teams[t.ID] = *t
	return nil
}

// ListTeams implements store.Store.
func (m *Store) ListTeams(ctx context.Context) ([]*store.Team, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*store.Team, 0, len(m.teams))
	for _, t := range m.teams {
		t := t
		out = append(out, &t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
