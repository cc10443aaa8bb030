package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netguard"
	"github.com/warren-sandbox/warren/internal/store"
)

// idlePoll is how long the worker sleeps with nothing due; a new event or
// a finished delivery wakes it sooner.
const idlePoll = 30 * time.Second

// batch bounds the pending deliveries read to find the next due time.
const batch = 256

// leaseMargin is added to the attempt timeout for a claim's lease: time
// to read the webhook and the event and to record the outcome. A process
// that dies mid-attempt holds its deliveries that long at most.
const leaseMargin = 20 * time.Second

// dispatch hands due deliveries to the workers until ctx ends. The store
// is the queue and its claims the exclusion: a delivery is claimed for a
// worker in the store, so neither another process sharing the store nor
// this one attempts it, or a later one of its webhook, meanwhile (see
// store.Events.ClaimDeliveries). What is pending survives a restart.
func (s *Service) dispatch(ctx context.Context) {
	// Never more claimed than Workers, so sends to jobs never block.
	jobs := make(chan *store.Delivery, s.opts.Workers)
	var wg sync.WaitGroup
	for range s.opts.Workers {
		wg.Go(func() {
			for d := range jobs {
				s.deliver(ctx, d)
				s.mu.Lock()
				delete(s.inflight, d.ID)
				s.mu.Unlock()
				s.Wake()
			}
		})
	}
	defer wg.Wait()
	defer close(jobs)
	for {
		wait := s.schedule(ctx, jobs)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// schedule claims as many due deliveries as there are free workers and
// hands them over, and returns how long to wait until the next one falls
// due or another process's lease runs out.
func (s *Service) schedule(ctx context.Context, jobs chan<- *store.Delivery) time.Duration {
	s.mu.Lock()
	free := s.opts.Workers - len(s.inflight)
	s.mu.Unlock()
	if free > 0 {
		claimed, err := s.opts.Store.ClaimDeliveries(ctx, s.claimer, s.opts.Now(), s.opts.Timeout+leaseMargin, free)
		if err != nil {
			if ctx.Err() == nil {
				log.G(ctx).Warn("claiming webhook deliveries", "err", err)
			}
			return time.Second
		}
		for _, d := range claimed {
			s.mu.Lock()
			// Claimed again while one of our workers still has it (its
			// lease ran out): that worker records the outcome.
			again := s.inflight[d.ID]
			s.inflight[d.ID] = true
			s.mu.Unlock()
			if !again {
				jobs <- d
			}
		}
	}
	return s.nextDue(ctx)
}

// nextDue is how long until a pending delivery falls due or a lease runs
// out, at most idlePoll.
func (s *Service) nextDue(ctx context.Context) time.Duration {
	pending, err := s.opts.Store.PendingDeliveries(ctx, batch)
	if err != nil {
		if ctx.Err() == nil {
			log.G(ctx).Warn("reading pending webhook deliveries", "err", err)
		}
		return time.Second
	}
	now, wait := s.opts.Now(), idlePoll
	for _, d := range pending {
		for _, t := range []time.Time{d.NextAttempt, d.LeaseUntil} {
			if t.After(now) {
				wait = min(wait, t.Sub(now))
			}
		}
	}
	return wait
}

// deliver makes one attempt of d and records its outcome.
func (s *Service) deliver(ctx context.Context, d *store.Delivery) {
	w, err := s.opts.Store.GetWebhook(ctx, d.WebhookID)
	if errdefs.IsNotFound(err) {
		return // deleted meanwhile, and its deliveries with it
	}
	var status int
	began := time.Now()
	switch {
	case err != nil:
		err = fmt.Errorf("reading webhook: %w", err)
	case !w.Enabled:
		err = errors.New("the webhook was disabled")
		d.Attempts = len(s.opts.Backoff) // this attempt is the last
	default:
		status, err = s.send(ctx, w, d)
	}
	d.LastDuration = time.Since(began)
	if ctx.Err() != nil {
		// Shutting down: the attempt counts for nothing; released, it is
		// made again by another process at once, or by this one next start.
		rerr := s.opts.Store.ReleaseDelivery(context.WithoutCancel(ctx), s.claimer, d.ID)
		if rerr != nil && !errdefs.IsNotFound(rerr) {
			log.G(ctx).Warn("releasing a webhook delivery", "delivery", d.ID, "err", rerr)
		}
		return
	}
	s.settle(ctx, d, status, err)
}

// settle records an attempt's outcome: delivered, another attempt after
// the backoff, or failed for good.
func (s *Service) settle(ctx context.Context, d *store.Delivery, status int, err error) {
	now := s.opts.Now().UTC()
	d.Attempts++
	d.LastStatus, d.UpdatedAt, d.LastError = status, now, ""
	switch {
	case err == nil:
		d.Status, d.NextAttempt = store.DeliveryDelivered, time.Time{}
	case d.Attempts > len(s.opts.Backoff):
		d.Status, d.NextAttempt, d.LastError = store.DeliveryFailed, time.Time{}, err.Error()
	default:
		d.NextAttempt, d.LastError = now.Add(s.opts.Backoff[d.Attempts-1]), err.Error()
	}
	if err != nil {
		log.G(ctx).Info("webhook delivery failed", "webhook", d.WebhookID, "delivery", d.ID, "attempt", d.Attempts, "status", d.Status, "err", err)
	}
	if s.opts.Observe != nil { // before the store has it, so whoever sees it there sees this too
		s.opts.Observe(attemptOutcome(d, err), d.LastDuration)
	}
	switch uerr := s.opts.Store.CompleteDelivery(context.WithoutCancel(ctx), s.claimer, d); {
	case uerr == nil, errdefs.IsNotFound(uerr): // deleted meanwhile
	case errors.Is(uerr, errdefs.ErrConflict):
		// The lease ran out and another worker claimed it: its attempt counts.
		log.G(ctx).Warn("webhook delivery outlived its lease", "delivery", d.ID, "err", uerr)
	default:
		log.G(ctx).Error("recording a webhook delivery", "delivery", d.ID, "err", uerr)
	}
}

// Outcomes of a delivery attempt, for Options.Observe.
const (
	OutcomeDelivered = "delivered" // the receiver answered 2xx
	OutcomeRetry     = "retry"     // it failed; another attempt follows
	OutcomeFailed    = "failed"    // it failed, and it was the last
)

func attemptOutcome(d *store.Delivery, err error) string {
	switch {
	case err == nil:
		return OutcomeDelivered
	case d.Status == store.DeliveryFailed:
		return OutcomeFailed
	default:
		return OutcomeRetry
	}
}

// maxResponse is how much of a receiver's answer is read (and dropped), so
// its connection can be reused.
const maxResponse = 64 << 10

// send POSTs d's event to w, signed, within the attempt timeout. Any 2xx
// is success; anything else, a redirect included, is a failure.
func (s *Service) send(ctx context.Context, w *store.Webhook, d *store.Delivery) (int, error) {
	e, err := s.opts.Store.GetEvent(ctx, d.EventID)
	if err != nil {
		return 0, fmt.Errorf("reading event: %w", err)
	}
	body, err := Body(e)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("webhook URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "warren-webhooks/1")
	req.Header.Set(HeaderWebhookID, w.ID)
	req.Header.Set(HeaderDeliveryID, d.ID)
	req.Header.Set(HeaderSignatureVersion, SignatureVersion)
	req.Header.Set(HeaderSignature, Sign(w.Secret, body))
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("no answer within %s", s.opts.Timeout)
		}
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return resp.StatusCode, nil
}

// newClient dials only where guard permits, follows no redirect (a
// redirect could lead past the guard's check of the registered URL) and
// ignores the environment's proxy settings.
func newClient(guard *netguard.Guard) *http.Client {
	t := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     time.Minute,
	}
	if guard != nil {
		t.DialContext = guard.DialContext
	}
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}
