// Package memstore is an in-memory store.Store for unit tests of the layers
// above the store. It has the same semantics as store/sqlite (storetest runs
// against both) but keeps nothing across restarts.
//
// Records go in and come out as deep copies, so neither the caller nor the
// store can change the other's maps, slices or pointers after the fact.
package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"maps"
	"slices"
	"sync"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

var _ store.Store = (*Store)(nil)

// Store keeps records in maps behind one mutex.
type Store struct {
	// mu guards every field below.
	mu        sync.RWMutex
	sandboxes map[string]*store.Sandbox
	templates map[string]*store.Template
	aliases   map[string]string // alias → template id
	builds    map[string]*store.Build
	tags      map[tagKey]*store.Tag
	keys      map[string]*store.APIKey
	snapshots map[string]*store.Snapshot
	snapNames map[string]string // name → snapshot id
	teams     map[string]store.Team
	usage     map[usageKey]store.UsageSample // made by the first RecordUsage
	ev        eventTables
	nodes     map[string]*store.Node
	idem      map[idemKey]*store.IdempotencyKey
	closed    bool
}

// New returns an empty store.
func New() *Store {
	return &Store{
		sandboxes: map[string]*store.Sandbox{},
		templates: map[string]*store.Template{},
		aliases:   map[string]string{},
		teams:     map[string]store.Team{},
		builds:    map[string]*store.Build{},
		tags:      map[tagKey]*store.Tag{},
		keys:      map[string]*store.APIKey{},
		snapshots: map[string]*store.Snapshot{},
		snapNames: map[string]string{},
		ev:        newEventTables(),
		nodes:     map[string]*store.Node{},
		idem:      map[idemKey]*store.IdempotencyKey{},
	}
}

// Close implements store.Store. Later calls fail, as they would on a closed
// database, so tests catch use after close.
func (m *Store) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// errClosed is returned by every call after Close.
var errClosed = fmt.Errorf("memstore: store closed: %w", errdefs.ErrUnavailable)

// lock takes the write lock and fails if the store is closed; the caller
// unlocks only when err is nil.
func (m *Store) lock() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errClosed
	}
	return nil
}

// rlock is lock for readers.
func (m *Store) rlock() error {
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return errClosed
	}
	return nil
}

// CreateSandbox implements store.Store.
func (m *Store) CreateSandbox(ctx context.Context, s *store.Sandbox) error {
	if err := checkSandbox(s); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.sandboxes[s.ID]; ok {
		return fmt.Errorf("creating sandbox %q: %w", s.ID, errdefs.ErrAlreadyExists)
	}
	m.sandboxes[s.ID] = cloneSandbox(s)
	return nil
}

// GetSandbox implements store.Store.
func (m *Store) GetSandbox(ctx context.Context, id string) (*store.Sandbox, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	s, ok := m.sandboxes[id]
	if !ok {
		return nil, fmt.Errorf("sandbox %q: %w", id, errdefs.ErrNotFound)
	}
	return cloneSandbox(s), nil
}

// UpdateSandbox implements store.Store.
func (m *Store) UpdateSandbox(ctx context.Context, s *store.Sandbox) error {
	if err := checkSandbox(s); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	// A record MoveSandbox handed to another node is not this writer's.
	if cur, ok := m.sandboxes[s.ID]; !ok || cur.Node != s.Node {
		return fmt.Errorf("updating sandbox %q: %w", s.ID, errdefs.ErrNotFound)
	}
	m.sandboxes[s.ID] = cloneSandbox(s)
	return nil
}

// DeleteSandbox implements store.Store.
func (m *Store) DeleteSandbox(ctx context.Context, id string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.sandboxes[id]; !ok {
		return fmt.Errorf("deleting sandbox %q: %w", id, errdefs.ErrNotFound)
	}
	delete(m.sandboxes, id)
	return nil
}

// ListSandboxes implements store.Store: newest StartedAt first, then by id so
// the order is stable when start times tie.
func (m *Store) ListSandboxes(ctx context.Context) ([]*store.Sandbox, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	out := make([]*store.Sandbox, 0, len(m.sandboxes))
	for _, s := range m.sandboxes {
		out = append(out, cloneSandbox(s))
	}
	slices.SortFunc(out, func(a, b *store.Sandbox) int {
		return cmp.Or(b.StartedAt.Compare(a.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

func checkSandbox(s *store.Sandbox) error {
	if s == nil || s.ID == "" {
		return fmt.Errorf("sandbox without id: %w", errdefs.ErrInvalidArgument)
	}
	return nil
}

// cloneSandbox returns a deep copy with times in UTC and empty collections as
// nil, the same shape the SQLite store reads back.
func cloneSandbox(s *store.Sandbox) *store.Sandbox {
	c := *s
	c.Metadata = cloneMap(s.Metadata)
	c.EnvVars = cloneMap(s.EnvVars)
	c.Network = storedPolicy(s.Network)
	c.StartedAt = s.StartedAt.UTC()
	c.EndAt = s.EndAt.UTC()
	c.PausedAt = s.PausedAt.UTC()
	return &c
}

// cloneList copies l, with an empty list as nil like the SQLite store.
func cloneList(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return slices.Clone(l)
}

// cloneMap copies m, with an empty map as nil like the SQLite store.
func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// storedPolicy is p as the SQLite store reads it back: a JSON round trip,
// so empty lists come back nil and nothing is shared with the caller.
func storedPolicy(p netpolicy.Policy) netpolicy.Policy {
	var out netpolicy.Policy
	b, _ := json.Marshal(p)
	_ = json.Unmarshal(b, &out)
	return out
}
