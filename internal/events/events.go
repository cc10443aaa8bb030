// Package events records sandbox lifecycle events in the store and
// delivers them to the webhooks teams registered, the way E2B's events API
// and webhooks do: each event is stored with one delivery per webhook that
// wants it, in one transaction, and a worker sends the deliveries, signed,
// retrying with backoff, so a sandbox operation never waits on a receiver.
// Events older than the retention are pruned.
package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netguard"
	"github.com/warren-sandbox/warren/internal/store"
)

// DefaultBackoff is the wait after each failed attempt: five attempts over
// about ten minutes (15 s, 45 s, 2 min 15 s, 6 min 45 s).
var DefaultBackoff = []time.Duration{15 * time.Second, 45 * time.Second, 135 * time.Second, 405 * time.Second}

// Defaults of Options.
const (
	DefaultTimeout = 10 * time.Second
	DefaultWorkers = 8
)

// Options configure a Service.
type Options struct {
	Store store.Store
	// Retention: events older than this are pruned; 0 keeps them.
	Retention time.Duration
	// Guard decides which addresses deliveries may connect to; nil allows
	// every address (tests).
	Guard *netguard.Guard
	// Backoff is the wait after each failed attempt; a delivery gets
	// len(Backoff)+1 attempts. nil: DefaultBackoff.
	Backoff []time.Duration
	// Timeout bounds one attempt, so a receiver that hangs holds only its
	// own webhook's deliveries. 0: DefaultTimeout.
	Timeout time.Duration
	// Workers is how many deliveries are made at once. 0: DefaultWorkers.
	Workers int
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Observe, when set, is told each delivery attempt's outcome
	// (Outcome*) and how long it took (the Prometheus metrics).
	Observe func(outcome string, took time.Duration)
}

// Service records events and delivers them.
type Service struct {
	opts   Options
	client *http.Client
	wake   chan struct{}
	// queue carries recorded events to the writer, so that an operation
	// pays for a channel send, not for a database transaction under its
	// sandbox's lock; a barrier (done set) lets readers wait for it.
	queue chan queued
	// gate guards writing, which is set while Run's writer drains queue
	// (otherwise Record writes at once): the writer takes it to stop, so
	// nothing is queued after its last drain.
	gate    sync.RWMutex
	writing bool

	// claimer names this Service's delivery claims in the store.
	claimer string

	// mu guards last and inflight.
	mu sync.Mutex
	// last is the newest event's timestamp: each event gets a later one,
	// so time order is record order even within a clock tick.
	last time.Time
	// inflight holds the deliveries this Service's workers are making:
	// it counts the free workers. Which deliveries may be made at once
	// (one per webhook, across processes) is the store's claims' concern.
	inflight map[string]bool
}

// New returns a Service; Run makes its deliveries.
func New(opts Options) *Service {
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{opts: opts, client: newClient(opts.Guard), wake: make(chan struct{}, 1), inflight: map[string]bool{},
		queue: make(chan queued, queueLen), claimer: newClaimer()}
}

// newClaimer names one Service's claims: the host and pid say whose
// they are in a shared store, the random part keeps two Services of one
// process (tests) apart.
func newClaimer() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), NewID()[:8])
}

// queueLen is how many events may wait for the writer; a burst beyond it
// is written by the recording goroutines themselves.
const queueLen = 4096

// queued is an event to write, or a barrier to close once every event
// before it is written.
type queued struct {
	e    *store.Event
	done chan struct{}
}

// Record stores e (its ID and Timestamp are set here) with a delivery for
// every enabled webhook of its team that wants its type, and wakes the
// worker. It runs after the operation succeeded and never fails or holds
// it up: the event is handed to Run's writer (stamped now, so its place
// in time order is kept), and a store error is logged and the event lost.
func (s *Service) Record(ctx context.Context, e *store.Event) {
	e.ID = NewID()
	e.Timestamp = s.stamp()
	if s.enqueue(queued{e: e}) {
		return
	}
	s.write(context.WithoutCancel(ctx), e) // no writer, or it is behind
}

// enqueue hands q to the writer if it runs and has room.
func (s *Service) enqueue(q queued) bool {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if !s.writing {
		return false
	}
	select {
	case s.queue <- q:
		return true
	default:
		return false
	}
}

// Sync returns once the events recorded before it are in the store (or
// ctx ends), so that a list right after an operation shows its event.
func (s *Service) Sync(ctx context.Context) {
	done := make(chan struct{})
	if !s.enqueue(queued{done: done}) {
		return // written at once, or a full queue: do not wait on it
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// write stores e with its deliveries.
func (s *Service) write(ctx context.Context, e *store.Event) {
	hooks, err := s.opts.Store.ListWebhooks(ctx)
	if err != nil {
		log.G(ctx).Error("recording sandbox event: listing webhooks", "sandbox", e.SandboxID, "type", e.Type, "err", err)
		hooks = nil // the event still counts
	}
	var ds []*store.Delivery
	for _, w := range hooks {
		if w.Enabled && w.TeamID == e.TeamID && slices.Contains(w.Events, e.Type) {
			ds = append(ds, &store.Delivery{ID: NewID(), WebhookID: w.ID, EventID: e.ID, EventType: e.Type,
				Status: store.DeliveryPending, NextAttempt: e.Timestamp, CreatedAt: e.Timestamp, UpdatedAt: e.Timestamp})
		}
	}
	if err := s.opts.Store.CreateEvent(ctx, e, ds); err != nil {
		log.G(ctx).Error("recording sandbox event", "sandbox", e.SandboxID, "type", e.Type, "err", err)
		return
	}
	if len(ds) > 0 {
		s.Wake()
	}
}

// writeQueued writes what Record queued until ctx ends, then what is
// left, and makes Record write by itself from then on.
func (s *Service) writeQueued(ctx context.Context) {
	s.setWriting(true)
	wctx := context.WithoutCancel(ctx)
	for {
		select {
		case q := <-s.queue:
			s.handle(wctx, q)
		case <-ctx.Done():
			s.setWriting(false)
			for {
				select {
				case q := <-s.queue:
					s.handle(wctx, q)
				default:
					return
				}
			}
		}
	}
}

func (s *Service) setWriting(on bool) {
	s.gate.Lock()
	s.writing = on
	s.gate.Unlock()
}

func (s *Service) handle(ctx context.Context, q queued) {
	if q.done != nil {
		close(q.done)
		return
	}
	s.write(ctx, q.e)
}

// stamp returns now, or just after the last event's time when the clock
// has not moved on since.
func (s *Service) stamp() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.opts.Now().UTC()
	if !t.After(s.last) {
		t = s.last.Add(time.Nanosecond)
	}
	s.last = t
	return t
}

// Wake makes the worker look for due deliveries now.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// Run delivers and prunes until ctx ends; deliveries left pending by an
// earlier run resume from the store.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.prune(ctx)
	}()
	go func() {
		defer wg.Done()
		s.writeQueued(ctx)
	}()
	s.dispatch(ctx)
	wg.Wait()
}

// pruneEvery is how often events past the retention are removed.
const pruneEvery = 10 * time.Minute

// prune removes events past the retention, at start and every pruneEvery.
func (s *Service) prune(ctx context.Context) {
	if s.opts.Retention <= 0 {
		return
	}
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		s.PruneOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// PruneOnce removes the events older than the retention, with their
// deliveries.
func (s *Service) PruneOnce(ctx context.Context) {
	n, err := s.opts.Store.DeleteEventsBefore(ctx, s.opts.Now().Add(-s.opts.Retention))
	if err != nil {
		log.G(ctx).Warn("pruning sandbox events past their retention", "err", err)
	} else if n > 0 {
		log.G(ctx).Info("pruned sandbox events past their retention", "count", n, "retention", s.opts.Retention)
	}
}

// NewID returns a random UUID (version 4), as E2B's event ids are.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
