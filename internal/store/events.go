package store

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Events keeps sandbox lifecycle events, the webhooks that want them and
// each webhook's deliveries. It is part of Store.
type Events interface {
	// CreateEvent stores e together with its deliveries (one per webhook
	// that wants it), all or nothing, so no event is left without the
	// deliveries it owes after a crash. The deliveries start unclaimed.
	CreateEvent(ctx context.Context, e *Event, deliveries []*Delivery) error
	GetEvent(ctx context.Context, id string) (*Event, error)
	// ListEvents returns the events q selects, by Timestamp then ID,
	// newest first unless q.Asc.
	ListEvents(ctx context.Context, q EventQuery) ([]*Event, error)
	// DeleteEventsBefore removes the events older than t with their
	// deliveries, and reports how many events went.
	DeleteEventsBefore(ctx context.Context, t time.Time) (int, error)

	CreateWebhook(ctx context.Context, w *Webhook) error
	GetWebhook(ctx context.Context, id string) (*Webhook, error)
	// ListWebhooks returns every webhook, oldest first.
	ListWebhooks(ctx context.Context) ([]*Webhook, error)
	// UpdateWebhook replaces the stored webhook with w (matched by w.ID).
	UpdateWebhook(ctx context.Context, w *Webhook) error
	// DeleteWebhook removes the webhook and its deliveries.
	DeleteWebhook(ctx context.Context, id string) error

	// UpdateDelivery replaces the stored delivery with d (matched by d.ID),
	// its claim included; the delivery worker uses the claims below.
	UpdateDelivery(ctx context.Context, d *Delivery) error
	// ClaimDeliveries leases to claimer up to limit pending deliveries
	// due at now (NextAttempt not after it), setting ClaimedBy and
	// LeaseUntil (now + lease), atomically with respect to every other
	// claim, also from other processes sharing the store. It returns
	// them earliest NextAttempt first (then CreatedAt, then ID). A claim
	// keeps each webhook's order: it never returns a delivery whose lease
	// is live, nor one of a webhook that has a delivery with a live lease
	// or an earlier (CreatedAt, then ID) pending one that is due. So a
	// webhook has at most one delivery leased, the oldest due one. An
	// expired lease (its holder died mid-attempt) is claimable again.
	ClaimDeliveries(ctx context.Context, claimer string, now time.Time, lease time.Duration, limit int) ([]*Delivery, error)
	// CompleteDelivery records the outcome of claimer's attempt of d
	// (Status, Attempts, NextAttempt, LastStatus, LastError,
	// LastDuration, UpdatedAt) and ends the lease. In the same
	// transaction it adds the attempt to the webhook's history that
	// DeliveryStats sums up: made at UpdatedAt, taking LastDuration,
	// answered LastStatus, a success exactly when Status is delivered. It fails with ErrNotFound when the delivery is
	// gone and ErrConflict when claimer no longer holds it (its lease ran
	// out and another claimed it); a lease that ran out but was not
	// claimed again still takes the outcome.
	CompleteDelivery(ctx context.Context, claimer string, d *Delivery) error
	// ReleaseDelivery ends claimer's lease of delivery id without
	// recording an attempt, so another claim may take it at once (a
	// worker stopping mid-attempt). Errors as CompleteDelivery's.
	ReleaseDelivery(ctx context.Context, claimer, id string) error
	// ListDeliveries returns a webhook's deliveries, newest first, at
	// most limit (0: all).
	ListDeliveries(ctx context.Context, webhookID string, limit int) ([]*Delivery, error)
	// PendingDeliveries returns up to limit deliveries still to be made,
	// the earliest NextAttempt first (then CreatedAt, then ID).
	PendingDeliveries(ctx context.Context, limit int) ([]*Delivery, error)
	// DeliveryStats sums up webhook webhookID's deliveries and attempts
	// (see DeliveryStats for which count since); an unknown webhook has
	// zero stats. The attempts go with their deliveries: when the events
	// are pruned, or the webhook is deleted.
	DeliveryStats(ctx context.Context, webhookID string, since time.Time) (*DeliveryStats, error)
}

// Event types, as E2B names them.
const (
	EventCreated     = "sandbox.lifecycle.created"
	EventPaused      = "sandbox.lifecycle.paused"
	EventResumed     = "sandbox.lifecycle.resumed"
	EventUpdated     = "sandbox.lifecycle.updated"
	EventSnapshotted = "sandbox.lifecycle.snapshotted"
	EventKilled      = "sandbox.lifecycle.killed"
)

// EventTypes lists every event type.
var EventTypes = []string{EventCreated, EventPaused, EventResumed, EventUpdated, EventSnapshotted, EventKilled}

// Event is one thing that happened to a sandbox.
type Event struct {
	ID          string
	Type        string // one of EventTypes
	SandboxID   string
	TemplateID  string
	BuildID     string // the template build the sandbox runs, when known
	ExecutionID string // one run of the sandbox: new at create and at each resume
	TeamID      string
	// Data is the event's eventData as JSON; nil for none.
	Data      []byte
	Timestamp time.Time
}

// EventQuery selects events.
type EventQuery struct {
	TeamID    string   // "" for every team
	SandboxID string   // "" for every sandbox
	Types     []string // empty for every type
	Offset    int
	Limit     int // 0: no limit
	Asc       bool
}

// Webhook is an endpoint a team registered for its sandboxes' events.
type Webhook struct {
	ID      string
	TeamID  string
	Name    string
	URL     string
	Enabled bool
	Events  []string // the event types it wants
	// Secret signs its deliveries; it is never shown again.
	Secret    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Delivery states.
const (
	DeliveryPending   = "pending"   // an attempt is due at NextAttempt
	DeliveryDelivered = "delivered" // the receiver answered 2xx
	DeliveryFailed    = "failed"    // every attempt failed
)

// Delivery is one event sent, or to be sent, to one webhook.
type Delivery struct {
	ID          string
	WebhookID   string
	EventID     string
	EventType   string
	Status      string // Delivery*
	Attempts    int
	NextAttempt time.Time // when pending: the next attempt is due
	LastStatus  int       // HTTP status of the last attempt; 0 for none
	LastError   string    // why the last attempt failed
	// LastDuration is how long the last attempt took, from sending the
	// request to the receiver's answer (or the failure).
	LastDuration time.Duration
	// ClaimedBy is the worker whose lease the delivery is under ("" for
	// none); the lease is live until LeaseUntil (see ClaimDeliveries).
	ClaimedBy  string
	LeaseUntil time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// CheckClaim validates ClaimDeliveries' arguments, for the stores.
func CheckClaim(claimer string, lease time.Duration, limit int) error {
	switch {
	case claimer == "":
		return fmt.Errorf("claiming deliveries: no claimer: %w", errdefs.ErrInvalidArgument)
	case lease <= 0 || limit <= 0:
		return fmt.Errorf("claiming deliveries: lease %s and limit %d must be positive: %w", lease, limit, errdefs.ErrInvalidArgument)
	}
	return nil
}

// DeliveryStats is how one webhook's deliveries are going, for an
// operator: Store.DeliveryStats.
type DeliveryStats struct {
	// Pending counts the deliveries still to be made, however old.
	Pending int
	// Delivered and Failed count the deliveries that settled (delivered,
	// or failed for good) since the stats' start.
	Delivered, Failed int
	// Attempts counts the attempts made since the start, FailedAttempts
	// those of them that failed.
	Attempts, FailedAttempts int
	// The durations of the attempts made since the start: mean, median
	// and 95th percentile (nearest rank), and the longest.
	MeanDuration, P50Duration, P95Duration, MaxDuration time.Duration
	// LastSuccess and LastFailure are when the newest successful and
	// failed attempts were made, of all those kept; LastFailureStatus and
	// LastError say how the failed one went.
	LastSuccess, LastFailure time.Time
	LastFailureStatus        int
	LastError                string
}

// SetDurations derives the duration figures from the attempts' durations:
// their sum, their maximum, and nth, which reads the duration at a rank (0
// the shortest). Every store derives them here, so the figures agree.
func (st *DeliveryStats) SetDurations(sum, longest time.Duration, nth func(rank int) (time.Duration, error)) error {
	if st.Attempts == 0 {
		return nil
	}
	st.MeanDuration = (sum / time.Duration(st.Attempts)).Truncate(time.Millisecond)
	st.MaxDuration = longest
	var err error
	if st.P50Duration, err = nth(Rank(st.Attempts, 0.5)); err != nil {
		return err
	}
	st.P95Duration, err = nth(Rank(st.Attempts, 0.95))
	return err
}

// Rank is the 0-based index, in n values sorted ascending, of the p-th
// quantile (0 < p <= 1) by nearest rank: the stores' percentiles.
func Rank(n int, p float64) int {
	r := int(math.Ceil(p*float64(n))) - 1
	return max(0, min(r, n-1))
}
