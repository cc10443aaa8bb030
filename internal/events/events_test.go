package events

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/netguard"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestSignMatchesE2B pins the signature to a value computed outside Go,
// the way E2B's documentation verifies it (Python: base64 of
// sha256(secret + payload), '=' stripped).
func TestSignMatchesE2B(t *testing.T) {
	t.Parallel()
	body := []byte(`{"type":"sandbox.lifecycle.created"}`)
	const want = "VwO/HKc0lchAlKvp1qEwp7rM8DA2A5kuz1VtVunoXsY"
	if got := Sign("my-secret", body); got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	if !Verify("my-secret", body, want) || Verify("other", body, want) {
		t.Fatal("Verify does not tell the right secret from a wrong one")
	}
}

// receiver is a webhook endpoint that records what it got.
type receiver struct {
	t      *testing.T
	secret string
	// answer picks the status of the n-th request (from 1).
	answer func(n int) int
	mu     sync.Mutex
	got    []Payload
	calls  int
	srv    *httptest.Server
}

func newReceiver(t *testing.T, secret string, answer func(int) int) *receiver {
	r := &receiver{t: t, secret: secret, answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.calls++
	n := r.calls
	r.mu.Unlock()
	if !Verify(r.secret, body, req.Header.Get(HeaderSignature)) || req.Header.Get(HeaderSignatureVersion) != "v1" ||
		req.Header.Get(HeaderWebhookID) == "" || req.Header.Get(HeaderDeliveryID) == "" {
		r.t.Errorf("delivery %d is not signed as E2B signs: headers %v", n, req.Header)
	}
	status := r.answer(n)
	if status == http.StatusOK {
		var p Payload
		if err := json.Unmarshal(body, &p); err != nil {
			r.t.Errorf("body %s: %v", body, err)
		}
		r.mu.Lock()
		r.got = append(r.got, p)
		r.mu.Unlock()
	}
	w.WriteHeader(status)
}

func (r *receiver) received() []Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func always(status int) func(int) int { return func(int) int { return status } }

// fixture is a Service over a SQLite store with short backoffs, running.
func fixture(t *testing.T, st store.Store, opts Options) *Service {
	t.Helper()
	opts.Store = st
	if opts.Backoff == nil {
		opts.Backoff = []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}
	}
	s := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func addHook(t *testing.T, st store.Store, id, team, url string, types ...string) {
	t.Helper()
	now := time.Now()
	if err := st.CreateWebhook(context.Background(), &store.Webhook{ID: id, TeamID: team, Name: id, URL: url,
		Enabled: true, Events: types, Secret: "sec-" + id, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

func record(s *Service, sandbox, team, typ string) *store.Event {
	e := &store.Event{Type: typ, SandboxID: sandbox, TemplateID: "base", TeamID: team}
	s.Record(context.Background(), e)
	return e
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func deliveries(t *testing.T, st store.Store, hook string) []*store.Delivery {
	t.Helper()
	ds, err := st.ListDeliveries(context.Background(), hook, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestRecordFansOut: an event goes to the enabled webhooks of its own
// team that want its type, and to no other.
func TestRecordFansOut(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	s := New(Options{Store: st}) // not running: deliveries stay pending
	addHook(t, st, "mine", "t1", "http://example.test/a", store.EventCreated)
	addHook(t, st, "other-type", "t1", "http://example.test/b", store.EventKilled)
	addHook(t, st, "other-team", "t2", "http://example.test/c", store.EventCreated)
	e := record(s, "sb1", "t1", store.EventCreated)
	if e.ID == "" || e.Timestamp.IsZero() {
		t.Fatalf("recorded event has no id or time: %+v", e)
	}
	for hook, want := range map[string]int{"mine": 1, "other-type": 0, "other-team": 0} {
		if got := len(deliveries(t, st, hook)); got != want {
			t.Errorf("webhook %s has %d deliveries, want %d", hook, got, want)
		}
	}
	// Events recorded in one clock tick still list in record order.
	frozen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s2 := New(Options{Store: sqlitetest.Open(t), Now: func() time.Time { return frozen }})
	a, b := record(s2, "x", "t", store.EventCreated), record(s2, "x", "t", store.EventKilled)
	if !b.Timestamp.After(a.Timestamp) {
		t.Fatalf("second event at %v, not after the first at %v", b.Timestamp, a.Timestamp)
	}
}

// TestDeliveryRetriesThenSucceeds: failed attempts are retried after the
// backoff, each signed, and the delivery's status shows the history.
func TestDeliveryRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	r := newReceiver(t, "sec-h", func(n int) int {
		if n < 3 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	addHook(t, st, "h", "t1", r.srv.URL, store.EventPaused)
	var obs observed
	s := fixture(t, st, Options{Observe: obs.observe})
	e := record(s, "sb1", "t1", store.EventPaused)
	eventually(t, "the third attempt", func() bool { return len(r.received()) == 1 })
	if p := r.received()[0]; p.ID != e.ID || p.Type != store.EventPaused || p.SandboxID != "sb1" || p.Version != "v1" {
		t.Errorf("received %+v, want event %s", p, e.ID)
	}
	eventually(t, "the delivery recorded", func() bool {
		ds := deliveries(t, st, "h")
		return len(ds) == 1 && ds[0].Status == store.DeliveryDelivered
	})
	d := deliveries(t, st, "h")[0]
	if d.Attempts != 3 || d.LastStatus != 200 || d.LastError != "" || !d.NextAttempt.IsZero() {
		t.Errorf("delivery = %+v, want 3 attempts ending in 200", d)
	}
	obs.want(t, OutcomeRetry, OutcomeRetry, OutcomeDelivered)
	wantStats(t, st, "h", store.DeliveryStats{Delivered: 1, Attempts: 3, FailedAttempts: 2, LastFailureStatus: 500,
		LastError: "the receiver answered 500 Internal Server Error"})
}

// observed collects Options.Observe's reports.
type observed struct {
	mu       sync.Mutex
	outcomes []string
}

func (o *observed) observe(outcome string, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if took > 0 {
		o.outcomes = append(o.outcomes, outcome)
	}
}

func (o *observed) want(t *testing.T, outcomes ...string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if !slices.Equal(o.outcomes, outcomes) {
		t.Errorf("observed attempts %v, want %v (each with its duration)", o.outcomes, outcomes)
	}
}

// wantStats checks the store's counts and last error for hook (its
// times only for being set: loopback answers within a millisecond).
func wantStats(t *testing.T, st store.Store, hook string, want store.DeliveryStats) {
	t.Helper()
	got, err := st.DeliveryStats(t.Context(), hook, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got.LastFailure.IsZero() != (want.FailedAttempts == 0) || got.LastSuccess.IsZero() != (want.Delivered == 0) {
		t.Errorf("stats %+v: the last success or failure is missing", got)
	}
	got.MeanDuration, got.P50Duration, got.P95Duration, got.MaxDuration = 0, 0, 0, 0
	got.LastSuccess, got.LastFailure = time.Time{}, time.Time{}
	if *got != want {
		t.Errorf("stats %+v, want %+v", *got, want)
	}
}

// TestDeliveryGivesUp: a receiver that always fails gets len(Backoff)+1
// attempts, then the delivery is failed with the last error.
func TestDeliveryGivesUp(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	r := newReceiver(t, "sec-h", always(http.StatusServiceUnavailable))
	addHook(t, st, "h", "t1", r.srv.URL, store.EventKilled)
	var obs observed
	s := fixture(t, st, Options{Observe: obs.observe})
	record(s, "sb1", "t1", store.EventKilled)
	eventually(t, "the delivery failed", func() bool {
		ds := deliveries(t, st, "h")
		return len(ds) == 1 && ds[0].Status == store.DeliveryFailed
	})
	d := deliveries(t, st, "h")[0]
	if d.Attempts != 3 || d.LastStatus != 503 || !strings.Contains(d.LastError, "503") {
		t.Errorf("delivery = %+v, want 3 attempts, the last 503", d)
	}
	time.Sleep(50 * time.Millisecond)
	if r.calls != 3 {
		t.Errorf("receiver called %d times, want 3", r.calls)
	}
	obs.want(t, OutcomeRetry, OutcomeRetry, OutcomeFailed)
	wantStats(t, st, "h", store.DeliveryStats{Failed: 1, Attempts: 3, FailedAttempts: 3, LastFailureStatus: 503,
		LastError: "the receiver answered 503 Service Unavailable"})
}

// TestDeliveriesInOrder: one receiver gets its events in the order they
// happened.
func TestDeliveriesInOrder(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	r := newReceiver(t, "sec-h", always(http.StatusOK))
	addHook(t, st, "h", "t1", r.srv.URL, store.EventTypes...)
	s := fixture(t, st, Options{Workers: 4})
	var want []string
	for _, typ := range []string{store.EventCreated, store.EventUpdated, store.EventPaused, store.EventResumed, store.EventSnapshotted, store.EventKilled} {
		want = append(want, record(s, "sb1", "t1", typ).ID)
	}
	eventually(t, "every event", func() bool { return len(r.received()) == len(want) })
	var got []string
	for _, p := range r.received() {
		got = append(got, p.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
}

// TestHangingReceiverStallsNoOther: a receiver that never answers holds
// only its own webhook; its attempts time out.
func TestHangingReceiverStallsNoOther(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	ok := newReceiver(t, "sec-ok", always(http.StatusOK))
	addHook(t, st, "hang", "t1", hang.URL, store.EventCreated)
	addHook(t, st, "ok", "t1", ok.srv.URL, store.EventCreated)
	s := fixture(t, st, Options{Timeout: 2 * time.Second, Workers: 2, Backoff: []time.Duration{time.Hour}})
	start := time.Now()
	for range 3 {
		record(s, "sb1", "t1", store.EventCreated)
	}
	eventually(t, "the other receiver's deliveries", func() bool { return len(ok.received()) == 3 })
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the other receiver waited %v: the hanging one held it up", took)
	}
	eventually(t, "the hanging attempt timed out", func() bool {
		ds := deliveries(t, st, "hang")
		return slices.ContainsFunc(ds, func(d *store.Delivery) bool { return d.Attempts == 1 })
	})
	for _, d := range deliveries(t, st, "hang") {
		if d.Attempts == 1 && (!strings.Contains(d.LastError, "no answer within") || d.Status != store.DeliveryPending) {
			t.Errorf("timed-out delivery = %+v, want pending with a timeout error", d)
		}
	}
}

// TestPendingResumeAfterRestart: deliveries recorded while no worker ran
// (a server that stopped) are made by the next Service over the store.
func TestPendingResumeAfterRestart(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	r := newReceiver(t, "sec-h", always(http.StatusOK))
	addHook(t, st, "h", "t1", r.srv.URL, store.EventKilled)
	stopped := New(Options{Store: st})
	e := record(stopped, "sb1", "t1", store.EventKilled)
	if ds := deliveries(t, st, "h"); len(ds) != 1 || ds[0].Status != store.DeliveryPending {
		t.Fatalf("deliveries before the restart = %v", ds)
	}
	fixture(t, st, Options{})
	eventually(t, "the delivery after the restart", func() bool { return len(r.received()) == 1 })
	if r.received()[0].ID != e.ID {
		t.Fatalf("received %+v, want event %s", r.received()[0], e.ID)
	}
}

// TestPrune removes events past the retention and keeps the rest.
func TestPrune(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	now := time.Now()
	clock := now.Add(-2 * time.Hour)
	s := New(Options{Store: st, Retention: time.Hour, Now: func() time.Time { return clock }})
	old := record(s, "sb1", "t1", store.EventCreated)
	clock = now
	kept := record(s, "sb1", "t1", store.EventKilled)
	s.PruneOnce(context.Background())
	left, err := st.ListEvents(context.Background(), store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ID != kept.ID {
		t.Fatalf("after pruning: %v, want only %s (not %s)", left, kept.ID, old.ID)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	s := New(Options{Store: sqlitetest.Open(t), Guard: &netguard.Guard{HostAddrs: func() []netip.Addr { return nil }}})
	for raw, ok := range map[string]bool{
		"https://hooks.example.com/e2b": true, "http://hooks.example.com:8080/x": true,
		"ftp://hooks.example.com/": false, "file:///etc/passwd": false, "hooks.example.com": false,
		"http://127.0.0.1:9/": false, "http://[::1]/": false, "http://169.254.169.254/": false,
		"http:///nohost": false, "https://" + strings.Repeat("a", 3000) + ".com": false,
	} {
		if err := s.CheckURL(raw); (err == nil) != ok {
			t.Errorf("CheckURL(%.40q) = %v, want ok %v", raw, err, ok)
		}
	}
	allowed := New(Options{Store: sqlitetest.Open(t), Guard: &netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	if err := allowed.CheckURL("http://127.0.0.1:9/"); err != nil {
		t.Errorf("an allowed range refused: %v", err)
	}
}

func TestCheckTypes(t *testing.T) {
	t.Parallel()
	if err := CheckTypes(store.EventTypes); err != nil {
		t.Fatal(err)
	}
	if err := CheckTypes([]string{"sandbox.lifecycle.exploded"}); err == nil {
		t.Fatal("an unknown type passed")
	}
}

// slowStore holds CreateEvent until release is closed.
type slowStore struct {
	store.Store
	release chan struct{}
}

func (s slowStore) CreateEvent(ctx context.Context, e *store.Event, ds []*store.Delivery) error {
	<-s.release
	return s.Store.CreateEvent(ctx, e, ds)
}

// TestRecordDoesNotWait: with Run going, Record hands the event to the
// writer and returns while the store is still busy; Sync returns once it
// is stored; once Run has ended, Record writes by itself, so no event
// waits in a queue nobody drains.
func TestRecordDoesNotWait(t *testing.T) {
	t.Parallel()
	mem := sqlitetest.Open(t)
	st := slowStore{Store: mem, release: make(chan struct{})}
	s := New(Options{Store: st})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	eventually(t, "the writer to start", func() bool { s.gate.RLock(); defer s.gate.RUnlock(); return s.writing })
	recorded := make(chan struct{})
	go func() { record(s, "sb1", "t1", store.EventCreated); close(recorded) }()
	select {
	case <-recorded:
	case <-time.After(5 * time.Second):
		t.Fatal("Record waited for the store")
	}
	synced := make(chan struct{})
	go func() { s.Sync(context.Background()); close(synced) }()
	select {
	case <-synced:
		t.Fatal("Sync returned before the event was stored")
	case <-time.After(50 * time.Millisecond):
	}
	close(st.release)
	<-synced
	if evs, err := mem.ListEvents(context.Background(), store.EventQuery{SandboxID: "sb1"}); err != nil || len(evs) != 1 {
		t.Fatalf("after Sync: %d events, %v", len(evs), err)
	}
	cancel()
	<-done
	record(s, "sb2", "t1", store.EventCreated) // no writer: stored before Record returns
	if evs, err := mem.ListEvents(context.Background(), store.EventQuery{SandboxID: "sb2"}); err != nil || len(evs) != 1 {
		t.Fatalf("after Run ended: %d events, %v", len(evs), err)
	}
}
