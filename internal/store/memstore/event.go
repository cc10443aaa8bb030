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

// eventTables hold events, webhooks and deliveries (guarded by Store.mu).
type eventTables struct {
	events     map[string]*store.Event
	webhooks   map[string]*store.Webhook
	deliveries map[string]*store.Delivery
	// attempts are each delivery's attempts (by delivery id), oldest
	// first, for DeliveryStats; they go with their delivery.
	attempts map[string][]attempt
}

func newEventTables() eventTables {
	return eventTables{events: map[string]*store.Event{}, webhooks: map[string]*store.Webhook{}, deliveries: map[string]*store.Delivery{},
		attempts: map[string][]attempt{}}
}

func cloneEvent(e *store.Event) *store.Event {
	c := *e
	c.Data = slices.Clone(e.Data)
	c.Timestamp = e.Timestamp.UTC()
	return &c
}

func cloneWebhook(w *store.Webhook) *store.Webhook {
	c := *w
	c.Events = slices.Clone(w.Events)
	c.CreatedAt, c.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	return &c
}

func cloneDelivery(d *store.Delivery) *store.Delivery {
	c := *d
	c.NextAttempt, c.CreatedAt, c.UpdatedAt = utc(d.NextAttempt), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	c.LeaseUntil = utc(d.LeaseUntil)
	c.LastDuration = d.LastDuration.Truncate(time.Millisecond) // as the SQL stores keep it
	return &c
}

// utc keeps the zero time zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// CreateEvent implements store.Store.
func (m *Store) CreateEvent(ctx context.Context, e *store.Event, ds []*store.Delivery) error {
	if e.ID == "" {
		return fmt.Errorf("event without id: %w", errdefs.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.ev.events[e.ID]; ok {
		return fmt.Errorf("event %q: %w", e.ID, errdefs.ErrAlreadyExists)
	}
	for _, d := range ds {
		if _, ok := m.ev.webhooks[d.WebhookID]; !ok {
			return fmt.Errorf("delivery to webhook %q: %w", d.WebhookID, errdefs.ErrNotFound)
		}
		if _, ok := m.ev.deliveries[d.ID]; ok || d.ID == "" {
			return fmt.Errorf("delivery %q: %w", d.ID, errdefs.ErrAlreadyExists)
		}
	}
	m.ev.events[e.ID] = cloneEvent(e)
	for _, d := range ds {
		c := cloneDelivery(d)
		c.ClaimedBy, c.LeaseUntil = "", time.Time{} // as the SQL stores insert them
		m.ev.deliveries[d.ID] = c
	}
	return nil
}

// GetEvent implements store.Store.
func (m *Store) GetEvent(ctx context.Context, id string) (*store.Event, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	e, ok := m.ev.events[id]
	if !ok {
		return nil, fmt.Errorf("event %q: %w", id, errdefs.ErrNotFound)
	}
	return cloneEvent(e), nil
}

// ListEvents implements store.Store.
func (m *Store) ListEvents(ctx context.Context, q store.EventQuery) ([]*store.Event, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	var out []*store.Event
	for _, e := range m.ev.events {
		if (q.TeamID == "" || e.TeamID == q.TeamID) && (q.SandboxID == "" || e.SandboxID == q.SandboxID) &&
			(len(q.Types) == 0 || slices.Contains(q.Types, e.Type)) {
			out = append(out, cloneEvent(e))
		}
	}
	slices.SortFunc(out, func(a, b *store.Event) int {
		c := cmp.Or(a.Timestamp.Compare(b.Timestamp), cmp.Compare(a.ID, b.ID))
		if !q.Asc {
			c = -c
		}
		return c
	})
	out = out[min(q.Offset, len(out)):]
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// DeleteEventsBefore implements store.Store.
func (m *Store) DeleteEventsBefore(ctx context.Context, t time.Time) (int, error) {
	if err := m.lock(); err != nil {
		return 0, err
	}
	defer m.mu.Unlock()
	n := 0
	for id, e := range m.ev.events {
		if e.Timestamp.Before(t) {
			delete(m.ev.events, id)
			n++
		}
	}
	for id, d := range m.ev.deliveries {
		if _, ok := m.ev.events[d.EventID]; !ok {
			delete(m.ev.deliveries, id)
			delete(m.ev.attempts, id)
		}
	}
	return n, nil
}

// CreateWebhook implements store.Store.
func (m *Store) CreateWebhook(ctx context.Context, w *store.Webhook) error {
	if w.ID == "" {
		return fmt.Errorf("webhook without id: %w", errdefs.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.ev.webhooks[w.ID]; ok {
		return fmt.Errorf("webhook %q: %w", w.ID, errdefs.ErrAlreadyExists)
	}
	m.ev.webhooks[w.ID] = cloneWebhook(w)
	return nil
}

// GetWebhook implements store.Store.
func (m *Store) GetWebhook(ctx context.Context, id string) (*store.Webhook, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	w, ok := m.ev.webhooks[id]
	if !ok {
		return nil, fmt.Errorf("webhook %q: %w", id, errdefs.ErrNotFound)
	}
	return cloneWebhook(w), nil
}

// ListWebhooks implements store.Store.
func (m *Store) ListWebhooks(ctx context.Context) ([]*store.Webhook, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	out := make([]*store.Webhook, 0, len(m.ev.webhooks))
	for _, w := range m.ev.webhooks {
		out = append(out, cloneWebhook(w))
	}
	slices.SortFunc(out, func(a, b *store.Webhook) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// UpdateWebhook implements store.Store.
func (m *Store) UpdateWebhook(ctx context.Context, w *store.Webhook) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.ev.webhooks[w.ID]; !ok {
		return fmt.Errorf("updating webhook %q: %w", w.ID, errdefs.ErrNotFound)
	}
	m.ev.webhooks[w.ID] = cloneWebhook(w)
	return nil
}

// DeleteWebhook implements store.Store.
func (m *Store) DeleteWebhook(ctx context.Context, id string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.ev.webhooks[id]; !ok {
		return fmt.Errorf("deleting webhook %q: %w", id, errdefs.ErrNotFound)
	}
	delete(m.ev.webhooks, id)
	for did, d := range m.ev.deliveries {
		if d.WebhookID == id {
			delete(m.ev.deliveries, did)
			delete(m.ev.attempts, did)
		}
	}
	return nil
}

// UpdateDelivery implements store.Store.
func (m *Store) UpdateDelivery(ctx context.Context, d *store.Delivery) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.ev.deliveries[d.ID]; !ok {
		return fmt.Errorf("updating delivery %q: %w", d.ID, errdefs.ErrNotFound)
	}
	m.ev.deliveries[d.ID] = cloneDelivery(d)
	return nil
}

// ListDeliveries implements store.Store.
func (m *Store) ListDeliveries(ctx context.Context, webhookID string, limit int) ([]*store.Delivery, error) {
	out, err := m.deliveriesWhere(func(d *store.Delivery) bool { return d.WebhookID == webhookID })
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *store.Delivery) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// PendingDeliveries implements store.Store.
func (m *Store) PendingDeliveries(ctx context.Context, limit int) ([]*store.Delivery, error) {
	out, err := m.deliveriesWhere(func(d *store.Delivery) bool { return d.Status == store.DeliveryPending })
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *store.Delivery) int {
		return cmp.Or(a.NextAttempt.Compare(b.NextAttempt), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *Store) deliveriesWhere(keep func(*store.Delivery) bool) ([]*store.Delivery, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	var out []*store.Delivery
	for _, d := range m.ev.deliveries {
		if keep(d) {
			out = append(out, cloneDelivery(d))
		}
	}
	return out, nil
}
