package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// PutNode implements store.Store.
func (m *Store) PutNode(ctx context.Context, n *store.Node) error {
	if n == nil || n.Name == "" {
		return fmt.Errorf("node without name: %w", errdefs.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	m.nodes[n.Name] = cloneNode(n)
	return nil
}

// GetNode implements store.Store.
func (m *Store) GetNode(ctx context.Context, name string) (*store.Node, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	n, ok := m.nodes[name]
	if !ok {
		return nil, fmt.Errorf("node %q: %w", name, errdefs.ErrNotFound)
	}
	return cloneNode(n), nil
}

// ListNodes implements store.Store.
func (m *Store) ListNodes(ctx context.Context) ([]*store.Node, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	out := make([]*store.Node, 0, len(m.nodes))
	for _, n := range m.nodes {
		out = append(out, cloneNode(n))
	}
	slices.SortFunc(out, func(a, b *store.Node) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteNode implements store.Store.
func (m *Store) DeleteNode(ctx context.Context, name string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.nodes[name]; !ok {
		return fmt.Errorf("deleting node %q: %w", name, errdefs.ErrNotFound)
	}
	delete(m.nodes, name)
	return nil
}

// ListSandboxesOnNode implements store.Store.
func (m *Store) ListSandboxesOnNode(ctx context.Context, node string) ([]*store.Sandbox, error) {
	all, err := m.ListSandboxes(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(s *store.Sandbox) bool { return s.Node != node }), nil
}

// MoveSandbox implements store.Store.
func (m *Store) MoveSandbox(ctx context.Context, id, from, to string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	s, ok := m.sandboxes[id]
	if !ok {
		return fmt.Errorf("moving sandbox %q: %w", id, errdefs.ErrNotFound)
	}
	if s.Node != from || s.State != store.SandboxPaused || !s.Parked {
		return store.MoveConflict(id, from, s.Node, s.State, s.Parked)
	}
	s.Node = to
	return nil
}

func cloneNode(n *store.Node) *store.Node {
	c := *n
	c.Templates = cloneList(n.Templates)
	c.StartedAt = n.StartedAt.UTC()
	c.HeartbeatAt = n.HeartbeatAt.UTC()
	return &c
}
