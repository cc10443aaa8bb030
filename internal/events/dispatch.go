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

// batch bounds the pending deliveries read at once.
const batch = 256

// dispatch hands due deliveries to the workers until ctx ends. The store
// is the queue: what is pending there survives a restart; the jobs
// channel, the in-memory queue, holds at most one delivery per worker.
func (s *Service) dispatch(ctx context.Context) {
	jobs := make(chan *store.Delivery, s.opts.Workers)
	var wg sync.WaitGroup
	for range s.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				s.deliver(ctx, d)
				s.mu.Lock()
				delete(s.busy, d.WebhookID)
				s.mu.Unlock()
				s.Wake()
			}
		}()
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

// schedule sends the due deliveries whose webhook has none in flight to
// jobs while a worker is free, and returns how long to wait until the next
// one falls due.
func (s *Service) schedule(ctx context.Context, jobs chan<- *store.Delivery) time.Duration {
	pending, err := s.opts.Store.PendingDeliveries(ctx, batch)
	if err != nil {
		if ctx.Err() == nil {
			log.G(ctx).Warn("reading pending webhook deliveries", "err", err)
		}
		return time.Second
	}
	now := s.opts.Now()
	for _, d := range pending {
		if d.NextAttempt.After(now) {
			return min(d.NextAttempt.Sub(now), idlePoll)
		}
		s.mu.Lock()
		if s.busy[d.WebhookID] {
			s.mu.Unlock()
			continue
		}
		s.busy[d.WebhookID] = true
		s.mu.Unlock()
		select {
		case jobs <- d:
		default: // the queue is full: a worker that finishes wakes us
			s.mu.Lock()
			delete(s.busy, d.WebhookID)
			s.mu.Unlock()
			return idlePoll
		}
	}
	return idlePoll
}

// deliver makes one attempt of d and records its outcome.
func (s *Service) deliver(ctx context.Context, d *store.Delivery) {
	w, err := s.opts.Store.GetWebhook(ctx, d.WebhookID)
	if errdefs.IsNotFound(err) {
		return // deleted meanwhile, and its deliveries with it
	}
	var status int
	switch {
	case err != nil:
		err = fmt.Errorf("reading webhook: %w", err)
	case !w.Enabled:
		err = errors.New("the webhook was disabled")
		d.Attempts = len(s.opts.Backoff) // this attempt is the last
	default:
		status, err = s.send(ctx, w, d)
	}
	if ctx.Err() != nil {
		return // shutting down: the attempt counts for nothing and runs again next start
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
	if uerr := s.opts.Store.UpdateDelivery(context.WithoutCancel(ctx), d); uerr != nil && !errdefs.IsNotFound(uerr) {
		log.G(ctx).Error("recording a webhook delivery", "delivery", d.ID, "err", uerr)
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
