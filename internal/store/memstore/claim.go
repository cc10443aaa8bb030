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

// ClaimDeliveries implements store.Store; the write lock makes the claim
// atomic.
func (m *Store) ClaimDeliveries(ctx context.Context, claimer string, now time.Time, lease time.Duration, limit int) ([]*store.Delivery, error) {
	if err := store.CheckClaim(claimer, lease, limit); err != nil {
		return nil, err
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	heads := m.claimableLocked(now)
	slices.SortFunc(heads, func(a, b *store.Delivery) int {
		return cmp.Or(a.NextAttempt.Compare(b.NextAttempt), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	heads = heads[:min(limit, len(heads))]
	out := make([]*store.Delivery, len(heads))
	for i, d := range heads {
		d.ClaimedBy, d.LeaseUntil = claimer, now.Add(lease).UTC()
		out[i] = cloneDelivery(d)
	}
	return out, nil
}

// claimableLocked returns, for each webhook with no live lease, its
// oldest pending delivery that is due (the stored records, not copies).
func (m *Store) claimableLocked(now time.Time) []*store.Delivery {
	head := map[string]*store.Delivery{}
	leased := map[string]bool{}
	for _, d := range m.ev.deliveries {
		if d.Status != store.DeliveryPending {
			continue
		}
		if d.LeaseUntil.After(now) {
			leased[d.WebhookID] = true
		}
		if d.NextAttempt.After(now) {
			continue
		}
		if h, ok := head[d.WebhookID]; !ok || cmp.Or(d.CreatedAt.Compare(h.CreatedAt), cmp.Compare(d.ID, h.ID)) < 0 {
			head[d.WebhookID] = d
		}
	}
	var out []*store.Delivery
	for w, d := range head {
		if !leased[w] {
			out = append(out, d)
		}
	}
	return out
}

// CompleteDelivery implements store.Store.
func (m *Store) CompleteDelivery(ctx context.Context, claimer string, d *store.Delivery) error {
	return m.endClaim(claimer, d.ID, func(stored *store.Delivery) {
		stored.Status, stored.Attempts, stored.NextAttempt = d.Status, d.Attempts, utc(d.NextAttempt)
		stored.LastStatus, stored.LastError, stored.UpdatedAt = d.LastStatus, d.LastError, d.UpdatedAt.UTC()
		stored.LastDuration = d.LastDuration.Truncate(time.Millisecond)
		m.addAttempt(stored)
	})
}

// ReleaseDelivery implements store.Store.
func (m *Store) ReleaseDelivery(ctx context.Context, claimer, id string) error {
	return m.endClaim(claimer, id, func(*store.Delivery) {})
}

// endClaim applies change to delivery id and clears its lease, if claimer
// holds it.
func (m *Store) endClaim(claimer, id string, change func(*store.Delivery)) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	d, ok := m.ev.deliveries[id]
	if !ok {
		return fmt.Errorf("delivery %q: %w", id, errdefs.ErrNotFound)
	}
	if claimer == "" || d.ClaimedBy != claimer {
		return fmt.Errorf("delivery %q is not claimed by %q: %w", id, claimer, errdefs.ErrConflict)
	}
	change(d)
	d.ClaimedBy, d.LeaseUntil = "", time.Time{}
	return nil
}
