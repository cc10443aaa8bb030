package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// attempt is one attempt of a delivery, as DeliveryStats reads it.
type attempt struct {
	number    int
	webhookID string
	at        time.Time
	took      time.Duration
	status    int
	ok        bool
	err       string
}

// addAttempt records d's last attempt, once per attempt number; the
// caller holds mu.
func (m *Store) addAttempt(d *store.Delivery) {
	for _, a := range m.ev.attempts[d.ID] {
		if a.number == d.Attempts {
			return
		}
	}
	m.ev.attempts[d.ID] = append(m.ev.attempts[d.ID], attempt{
		number: d.Attempts, webhookID: d.WebhookID, at: d.UpdatedAt, took: d.LastDuration,
		status: d.LastStatus, ok: d.Status == store.DeliveryDelivered, err: d.LastError,
	})
}

// DeliveryStats implements store.Store.
func (m *Store) DeliveryStats(ctx context.Context, webhookID string, since time.Time) (*store.DeliveryStats, error) {
	if err := m.rlock(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	var st store.DeliveryStats
	for _, d := range m.ev.deliveries {
		if d.WebhookID != webhookID {
			continue
		}
		switch {
		case d.Status == store.DeliveryPending:
			st.Pending++
		case d.UpdatedAt.Before(since):
		case d.Status == store.DeliveryDelivered:
			st.Delivered++
		case d.Status == store.DeliveryFailed:
			st.Failed++
		}
	}
	var took []time.Duration
	var sum time.Duration
	for _, as := range m.ev.attempts {
		for _, a := range as {
			if a.webhookID != webhookID {
				continue
			}
			lastOf(&st, a)
			if a.at.Before(since) {
				continue
			}
			st.Attempts++
			if !a.ok {
				st.FailedAttempts++
			}
			took, sum = append(took, a.took), sum+a.took
		}
	}
	slices.Sort(took)
	var longest time.Duration
	if len(took) > 0 {
		longest = took[len(took)-1]
	}
	nth := func(rank int) (time.Duration, error) { return took[rank], nil }
	if err := st.SetDurations(sum, longest, nth); err != nil {
		return nil, err
	}
	return &st, nil
}

// lastOf keeps a in st when it is the newest success or failure yet.
func lastOf(st *store.DeliveryStats, a attempt) {
	switch {
	case a.ok && a.at.After(st.LastSuccess):
		st.LastSuccess = a.at
	case !a.ok && a.at.After(st.LastFailure):
		st.LastFailure, st.LastFailureStatus, st.LastError = a.at, a.status, a.err
	}
}
