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

// CreateAPIKey implements store.Store. Both the id and the hash must be new:
// two records for one secret would make revocation incomplete.
func (m *Store) CreateAPIKey(ctx context.Context, k *store.APIKey) error {
	if k == nil || k.ID == "" || k.Hash == "" {
		return fmt.Errorf("api key without id or hash: %w", errdefs.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.keys[k.ID]; ok {
		return fmt.Errorf("creating api key %q: %w", k.ID, errdefs.ErrAlreadyExists)
	}
	for _, o := range m.keys {
		if o.Hash == k.Hash {
			return fmt.Errorf("creating api key %q: hash already stored: %w", k.ID, errdefs.ErrAlreadyExists)
		}
	}
	m.keys[k.ID] = cloneKey(k)
	return nil
}

// GetAPIKeyByHash implements store.Store.
func (m *Store) GetAPIKeyByHash(ctx context.Context, hash string) (*store.APIKey, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	for _, k := range m.keys {
		if k.Hash == hash && k.RevokedAt == nil {
			return cloneKey(k), nil
		}
	}
	// The hash stays out of the message: it is as good as the key to
	// whoever can read logs and query the store.
	return nil, fmt.Errorf("api key: %w", errdefs.ErrNotFound)
}

// ListAPIKeys implements store.Store: oldest CreatedAt first, then by id,
// revoked keys included.
func (m *Store) ListAPIKeys(ctx context.Context) ([]*store.APIKey, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	out := make([]*store.APIKey, 0, len(m.keys))
	for _, k := range m.keys {
		out = append(out, cloneKey(k))
	}
	slices.SortFunc(out, func(a, b *store.APIKey) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// RevokeAPIKey implements store.Store. An id match wins; revoking a revoked
// key by id is a no-op that keeps the first RevokedAt. A name must match
// exactly one key that is still active, since names need not be unique.
func (m *Store) RevokeAPIKey(ctx context.Context, idOrName string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	now := time.Now().UTC()
	if k, ok := m.keys[idOrName]; ok {
		if k.RevokedAt == nil {
			k.RevokedAt = &now
		}
		return nil
	}
	var match []*store.APIKey
	for _, k := range m.keys {
		if k.Name == idOrName && k.RevokedAt == nil {
			match = append(match, k)
		}
	}
	switch len(match) {
	case 0:
		return fmt.Errorf("revoking api key %q: %w", idOrName, errdefs.ErrNotFound)
	case 1:
		match[0].RevokedAt = &now
		return nil
	default:
		return fmt.Errorf("revoking api key %q: %d active keys have that name, use the id: %w",
			idOrName, len(match), errdefs.ErrInvalidArgument)
	}
}

func cloneKey(k *store.APIKey) *store.APIKey {
	c := *k
	c.CreatedAt = k.CreatedAt.UTC()
	c.RevokedAt = utcPtr(k.RevokedAt)
	c.ExpiresAt = utcPtr(k.ExpiresAt)
	c.Scopes = nil
	if len(k.Scopes) > 0 {
		c.Scopes = slices.Clone(k.Scopes)
	}
	return &c
}

// utcPtr copies a time pointer, so a caller keeping the original can't
// change the stored value through it.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// RenameAPIKey implements store.Store.
func (m *Store) RenameAPIKey(ctx context.Context, id, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[id]
	if !ok {
		return fmt.Errorf("renaming api key %q: %w", id, errdefs.ErrNotFound)
	}
	k.Name = name
	return nil
}
