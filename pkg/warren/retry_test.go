package warren

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// refusingServer answers the first refusals requests with status (and
// Retry-After when set), then 200 with an empty list, recording what
// each try carried.
type refusingServer struct {
	mu       sync.Mutex
	tries    int
	keys     []string
	bodies   []string
	refusals int
	status   int
	after    string
}

func (s *refusingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.tries++
	s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
	s.bodies = append(s.bodies, string(body))
	refuse := s.tries <= s.refusals
	s.mu.Unlock()
	if refuse {
		if s.after != "" {
			w.Header().Set("Retry-After", s.after)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		_, _ = w.Write([]byte(`{"code": 429, "message": "slow down"}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodPost {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"sandboxID": "sb1", "templateID": "base", "clientID": "c", "envdVersion": "0.1", "domain": null, "trafficAccessToken": null}`))
		return
	}
	_, _ = w.Write([]byte(`[]`))
}

// seen is the tries so far and what they carried.
func (s *refusingServer) seen() (int, []string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries, s.keys, s.bodies
}

func retryClient(t *testing.T, h http.Handler, o RetryOptions) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(Config{APIURL: srv.URL, APIKey: "k", Domain: "test", Retry: o})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRetries(t *testing.T) {
	t.Parallel()
	fast := RetryOptions{MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Second}
	list := func(c *Client) error { _, _, err := c.List(t.Context(), ListOptions{}); return err }
	create := func(c *Client) error { _, err := c.Create(t.Context(), "base", CreateOptions{}); return err }
	tests := []struct {
		name      string
		refusals  int
		status    int
		after     string
		opts      RetryOptions
		call      func(*Client) error
		wantTries int
		wantErr   bool
		minTime   time.Duration
	}{
		{"429 with Retry-After is waited out", 1, 429, "1", fast, list, 2, false, time.Second},
		{"503 backs off and succeeds", 2, 503, "", fast, list, 3, false, 0},
		{"attempts are bounded", 10, 503, "", RetryOptions{MaxAttempts: 3, MinBackoff: time.Millisecond}, list, 3, true, 0},
		{"1 attempt turns retries off", 1, 429, "", RetryOptions{MaxAttempts: 1}, list, 1, true, 0},
		{"Retry-After beyond MaxBackoff is not waited for", 1, 429, "60", fast, list, 1, true, 0},
		{"500 is not retried", 1, 500, "", fast, list, 1, true, 0},
		{"create retries with one key and the same body", 2, 429, "0", fast, create, 3, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &refusingServer{refusals: tc.refusals, status: tc.status, after: tc.after}
			c := retryClient(t, srv, tc.opts)
			start := time.Now()
			err := tc.call(c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			tries, keys, bodies := srv.seen()
			if tries != tc.wantTries {
				t.Errorf("%d tries, want %d", tries, tc.wantTries)
			}
			if el := time.Since(start); el < tc.minTime {
				t.Errorf("returned after %v, before the server's Retry-After %v", el, tc.minTime)
			}
			for i := 1; i < len(keys); i++ {
				if keys[i] != keys[0] || bodies[i] != bodies[0] {
					t.Errorf("try %d sent key %q body %q, first sent %q %q", i+1, keys[i], bodies[i], keys[0], bodies[0])
				}
			}
		})
	}
}

// TestRetryNotForUnsafePOST: a POST without an Idempotency-Key might
// have done its work before the refusal, so it is never sent twice.
func TestRetryNotForUnsafePOST(t *testing.T) {
	t.Parallel()
	srv := &refusingServer{refusals: 1, status: 503}
	c := retryClient(t, srv, RetryOptions{MinBackoff: time.Millisecond})
	err := c.Kill(t.Context(), "sb1") // DELETE: safe, retried
	if tries, _, _ := srv.seen(); tries != 2 {
		t.Errorf("DELETE: %d tries, want 2 (err %v)", tries, err)
	}
	srv2 := &refusingServer{refusals: 1, status: 503}
	c2 := retryClient(t, srv2, RetryOptions{MinBackoff: time.Millisecond})
	_, err = c2.RequestBuild(t.Context(), "tpl", BuildOptions{}) // POST, no key
	tries, keys, _ := srv2.seen()
	if err == nil || tries != 1 {
		t.Errorf("POST without a key: %d tries, err %v; want 1 try and the refusal", tries, err)
	}
	if len(keys) > 0 && keys[0] != "" {
		t.Errorf("RequestBuild sent Idempotency-Key %q", keys[0])
	}
}

// TestRetryRespectsContext: a wait for Retry-After ends with the caller's
// context, with its error.
func TestRetryRespectsContext(t *testing.T) {
	t.Parallel()
	srv := &refusingServer{refusals: 5, status: 429, after: "20"}
	c := retryClient(t, srv, RetryOptions{MaxBackoff: time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := c.List(ctx, ListOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("returned after %v: the wait ignored the context", el)
	}
	if tries, _, _ := srv.seen(); tries != 1 {
		t.Errorf("%d tries, want 1", tries)
	}
}

// TestCreateSendsKey: every create carries a key, the caller's when set.
func TestCreateSendsKey(t *testing.T) {
	t.Parallel()
	srv := &refusingServer{}
	c := retryClient(t, srv, RetryOptions{})
	for _, key := range []string{"", "mine"} {
		if _, err := c.Create(t.Context(), "base", CreateOptions{IdempotencyKey: key}); err != nil {
			t.Fatal(err)
		}
	}
	if _, keys, _ := srv.seen(); len(keys) != 2 || keys[0] == "" || strings.TrimSpace(keys[0]) != keys[0] || keys[1] != "mine" {
		t.Errorf("keys sent %q, want a generated one then %q", keys, "mine")
	}
}
