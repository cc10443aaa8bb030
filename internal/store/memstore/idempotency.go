package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// idemKey is an idempotency record's identity: keys are per team.
type idemKey struct{ team, key string }

// ClaimIdempotencyKey implements store.Store.
func (m *Store) ClaimIdempotencyKey(ctx context.Context, k *store.IdempotencyKey, expireBefore, staleBefore time.Time) (*store.IdempotencyKey, bool, error) {
	if err := store.CheckIdempotencyKey(k); err != nil {
		return nil, false, err
	}
	if err := m.lock(); err != nil {
		return nil, false, err
	}
	defer m.mu.Unlock()
	maps.DeleteFunc(m.idem, func(_ idemKey, r *store.IdempotencyKey) bool { return r.CreatedAt.Before(expireBefore) })
	id := idemKey{k.TeamID, k.Key}
	if kept, ok := m.idem[id]; ok && !kept.Replaceable(expireBefore, staleBefore) {
		return cloneIdem(kept), false, nil
	}
	m.idem[id] = cloneIdem(k)
	return nil, true, nil
}

// CompleteIdempotencyKey implements store.Store.
func (m *Store) CompleteIdempotencyKey(ctx context.Context, teamID, key, sandboxID string, status int, response []byte) error {
	if sandboxID == "" {
		return fmt.Errorf("completing idempotency key: no sandbox: %w", errdefs.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	r, ok := m.idem[idemKey{teamID, key}]
	if !ok || !r.Pending() {
		return fmt.Errorf("idempotency key %q: no pending claim: %w", key, errdefs.ErrNotFound)
	}
	r.SandboxID, r.Status, r.Response = sandboxID, status, slices.Clone(response)
	return nil
}

// ReleaseIdempotencyKey implements store.Store.
func (m *Store) ReleaseIdempotencyKey(ctx context.Context, teamID, key string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if r, ok := m.idem[idemKey{teamID, key}]; ok && r.Pending() {
		delete(m.idem, idemKey{teamID, key})
	}
	return nil
}

// ReleaseIdempotencyKeysOf implements store.Store.
func (m *Store) ReleaseIdempotencyKeysOf(ctx context.Context, owner string) (int, error) {
	if err := m.lock(); err != nil {
		return 0, err
	}
	defer m.mu.Unlock()
	n := len(m.idem)
	maps.DeleteFunc(m.idem, func(_ idemKey, r *store.IdempotencyKey) bool { return r.Pending() && r.Owner == owner })
	return n - len(m.idem), nil
}

func cloneIdem(k *store.IdempotencyKey) *store.IdempotencyKey {
	c := *k
	c.Response = slices.Clone(k.Response)
	c.CreatedAt = k.CreatedAt.UTC()
	return &c
}
