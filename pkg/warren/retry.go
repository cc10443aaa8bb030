package warren

import (
	crand "crypto/rand"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryOptions say how the client retries an API request the server
// refused for now: 429 Too Many Requests (a team over its rate or
// concurrency) or 503 Service Unavailable (a server or node shedding
// load). Only requests that are safe to send twice are retried: GET,
// HEAD, OPTIONS, PUT and DELETE, and a POST or PATCH carrying an
// Idempotency-Key (Create sends one). The zero value is the default.
type RetryOptions struct {
	// MaxAttempts bounds the tries of one request, the first included
	// (default 4; 1 turns retries off).
	MaxAttempts int
	// MinBackoff is the first wait when the server gives no Retry-After
	// (default 250 ms); each later wait doubles, up to MaxBackoff, with
	// jitter so that many clients do not come back together.
	MinBackoff time.Duration
	// MaxBackoff bounds every wait (default 30 s). A Retry-After longer
	// than it is not waited for: the refusal is returned.
	MaxBackoff time.Duration
}

func (o RetryOptions) withDefaults() RetryOptions {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 4
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	return o
}

// retryDoer sends REST requests through next, retrying as o says.
type retryDoer struct {
	next *http.Client
	o    RetryOptions
}

func (d *retryDoer) Do(req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := d.next.Do(req)
		if err != nil || attempt >= d.o.MaxAttempts || !retryable(req, resp) {
			return resp, err
		}
		wait, ok := d.backoff(attempt, resp.Header.Get("Retry-After"))
		if !ok {
			return resp, nil
		}
		next, err := rewind(req)
		if err != nil {
			return resp, nil // the body cannot be sent again: the refusal stands
		}
		// Drain so the connection is reused, then wait out the server.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err := sleepCtx(req.Context(), wait); err != nil {
			return nil, err
		}
		req = next
	}
}

// retryable: a refusal for now, of a request that is safe to repeat.
func retryable(req *http.Request, resp *http.Response) bool {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return req.Header.Get("Idempotency-Key") != ""
}

// backoff is the wait before try attempt+1: the server's Retry-After
// (seconds or an HTTP date) when it gives one, else exponential with
// jitter. ok is false when the server asks for longer than MaxBackoff.
func (d *retryDoer) backoff(attempt int, retryAfter string) (time.Duration, bool) {
	if retryAfter != "" {
		var wait time.Duration
		if s, err := strconv.Atoi(retryAfter); err == nil && s >= 0 {
			wait = time.Duration(s) * time.Second
		} else if t, err := http.ParseTime(retryAfter); err == nil {
			wait = max(time.Until(t), 0)
		} else {
			return d.jittered(attempt), true // unreadable: as if absent
		}
		return wait, wait <= d.o.MaxBackoff
	}
	return d.jittered(attempt), true
}

func (d *retryDoer) jittered(attempt int) time.Duration {
	wait := d.o.MaxBackoff
	if shift := attempt - 1; shift < 30 && d.o.MinBackoff<<shift < wait {
		wait = d.o.MinBackoff << shift
	}
	// Half fixed, half random: spread out, never much shorter.
	return wait/2 + rand.N(wait/2+1)
}

// rewind returns a copy of req whose body can be sent again.
func rewind(req *http.Request) (*http.Request, error) {
	next := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return next, nil
	}
	if req.GetBody == nil {
		return nil, errNoRewind
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	next.Body = body
	return next, nil
}

var errNoRewind = errors.New("request body cannot be replayed")

// newIdempotencyKey makes a create's key: random, so that only the
// retries of one Create share it.
func newIdempotencyKey() string { return crand.Text() }
