package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// idemManager counts creates; each one records a sandbox in the store (a
// replay looks there). gate, when set, holds creates until closed.
type idemManager struct {
	Sandboxes // only Create is called
	st        store.Store
	gate      chan struct{}
	mu        sync.Mutex
	n         int
	failNext  error
}

func (m *idemManager) Create(ctx context.Context, req sandbox.CreateRequest) (*store.Sandbox, error) {
	m.mu.Lock()
	m.n++
	n, fail := m.n, m.failNext
	m.failNext = nil
	m.mu.Unlock()
	if m.gate != nil {
		<-m.gate
	}
	if fail != nil {
		return nil, fail
	}
	sb := &store.Sandbox{ID: fmt.Sprintf("sb%d", n), TemplateID: req.TemplateID, TeamID: req.TeamID, State: store.SandboxRunning}
	return sb, m.st.CreateSandbox(ctx, sb)
}

func (m *idemManager) creates() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

type idemFixture struct {
	srv  *httptest.Server
	st   store.Store
	mgr  *idemManager
	keys map[string]string // team → API key
}

// newIdemFixture serves a real SQLite store, seen by the server through
// wrap when given (to make some calls fail).
func newIdemFixture(t *testing.T, wrap ...func(store.Store) store.Store) *idemFixture {
	t.Helper()
	st := sqlitetest.Open(t)
	f := &idemFixture{st: st, mgr: &idemManager{st: st}, keys: map[string]string{}}
	served := st
	for _, w := range wrap {
		served = w(served)
	}
	for _, team := range []string{"alpha", "beta"} {
		key, err := apikey.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CreateAPIKey(t.Context(), &store.APIKey{ID: team, Name: team, Hash: apikey.Hash(key), TeamID: team, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		f.keys[team] = key
	}
	f.srv = httptest.NewServer(New(Options{Store: served, Manager: f.mgr, Domain: "example.test", MaxTimeout: time.Hour}))
	t.Cleanup(f.srv.Close)
	return f
}

// downReleases fails the first n releases of a claim, as a store that
// cannot be reached does.
type downReleases struct {
	store.Store
	mu sync.Mutex
	n  int
}

func (d *downReleases) ReleaseIdempotencyKey(ctx context.Context, team, key string) error {
	d.mu.Lock()
	down := d.n > 0
	if down {
		d.n--
	}
	d.mu.Unlock()
	if down {
		return errdefs.New(errdefs.ErrUnavailable, "the database cannot be reached")
	}
	return d.Store.ReleaseIdempotencyKey(ctx, team, key)
}

// create sends a create with the given Idempotency-Key values.
func (f *idemFixture) create(t *testing.T, team, path, body string, keys ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", f.keys[team])
	for _, k := range keys {
		req.Header.Add(idempotencyHeader, k)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func sandboxIDOf(t *testing.T, body string) string {
	t.Helper()
	var v struct {
		SandboxID string `json:"sandboxID"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decoding %q: %v", body, err)
	}
	return v.SandboxID
}

func TestIdempotencyKeyValidation(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t)
	tests := []struct {
		name string
		keys []string
		want int
	}{
		{"uuid", []string{"9b2f4a6e-0c1d-4e5f-8a7b-112233445566"}, http.StatusCreated},
		{"longest", []string{strings.Repeat("k", maxIdempotencyKey)}, http.StatusCreated},
		{"punctuation", []string{"a.b_c:d/e+f=="}, http.StatusCreated},
		{"empty", []string{""}, http.StatusBadRequest},
		{"too long", []string{strings.Repeat("k", maxIdempotencyKey+1)}, http.StatusBadRequest},
		{"space", []string{"a b"}, http.StatusBadRequest},
		{"not ascii", []string{"clé"}, http.StatusBadRequest},
		{"tab", []string{"a\tb"}, http.StatusBadRequest},
		{"twice", []string{"a", "b"}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		status, body, _ := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, tt.keys...)
		if status != tt.want {
			t.Errorf("%s: status %d (%s), want %d", tt.name, status, body, tt.want)
		}
	}
}

func TestIdempotentCreateSequence(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t)
	const a = `{"templateID":"base","timeout":60,"metadata":{"x":"1","y":"2"}}`
	tests := []struct {
		name, team, path, body, key string
		want                        int
		wantID                      string // "" for an error
		replayed                    bool
	}{
		{"first", "alpha", "/v2/sandboxes", a, "k1", http.StatusCreated, "sb1", false},
		{"retry", "alpha", "/v2/sandboxes", a, "k1", http.StatusCreated, "sb1", true},
		{"retry, same body written otherwise", "alpha", "/v2/sandboxes", ` { "metadata":{"y":"2","x":"1"}, "timeout":60, "templateID":"base"}`, "k1", http.StatusCreated, "sb1", true},
		{"another body", "alpha", "/v2/sandboxes", `{"templateID":"base","timeout":61}`, "k1", http.StatusUnprocessableEntity, "", false},
		{"another endpoint", "alpha", "/sandboxes", a, "k1", http.StatusUnprocessableEntity, "", false},
		{"another team, same key", "beta", "/v2/sandboxes", a, "k1", http.StatusCreated, "sb2", false},
		{"v1 endpoint, own key", "alpha", "/sandboxes", a, "k2", http.StatusCreated, "sb3", false},
		{"v1 retry", "alpha", "/sandboxes", a, "k2", http.StatusCreated, "sb3", true},
		{"no key", "alpha", "/v2/sandboxes", a, "", http.StatusCreated, "sb4", false},
		{"bad body is not recorded", "alpha", "/v2/sandboxes", `{"timeout":1}`, "k3", http.StatusBadRequest, "", false},
	}
	for _, tt := range tests {
		var keys []string
		if tt.key != "" {
			keys = []string{tt.key}
		}
		status, body, h := f.create(t, tt.team, tt.path, tt.body, keys...)
		if status != tt.want {
			t.Fatalf("%s: status %d (%s), want %d", tt.name, status, body, tt.want)
		}
		if tt.wantID == "" {
			checkErrorShape(t, tt.name, status, body)
			continue
		}
		if id := sandboxIDOf(t, body); id != tt.wantID {
			t.Errorf("%s: sandbox %q, want %q", tt.name, id, tt.wantID)
		}
		if got := h.Get(ReplayedHeader) == "true"; got != tt.replayed {
			t.Errorf("%s: replayed header %v, want %v", tt.name, got, tt.replayed)
		}
	}
	if n := f.mgr.creates(); n != 4 {
		t.Errorf("%d creates reached the manager, want 4", n)
	}
}

func checkErrorShape(t *testing.T, name string, status int, body string) {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code == nil || *e.Code != status || e.Message == nil || *e.Message == "" {
		t.Errorf("%s: error body %q is not E2B's shape with code %d", name, body, status)
	}
}

// TestIdempotentCreateConcurrent: creates with one key sent at once make
// one sandbox, and every request gets the same answer.
func TestIdempotentCreateConcurrent(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t)
	f.mgr.gate = make(chan struct{})
	const n = 8
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body, _ := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "same")
			if status != http.StatusCreated {
				t.Errorf("request %d: status %d (%s)", i, status, body)
			}
			bodies[i] = body
		}()
	}
	time.Sleep(50 * time.Millisecond) // let them all arrive while the first is held
	close(f.mgr.gate)
	wg.Wait()
	for i := 1; i < n; i++ {
		if bodies[i] != bodies[0] {
			t.Errorf("answer %d differs:\n%s\nvs\n%s", i, bodies[i], bodies[0])
		}
	}
	if c := f.mgr.creates(); c != 1 {
		t.Errorf("%d creates reached the manager, want 1", c)
	}
}

// TestIdempotentCreateOutcomes: what a retry gets after the first create
// failed, after its sandbox went, and while a create in another process
// holds the key.
func TestIdempotentCreateOutcomes(t *testing.T) {
	t.Parallel()
	t.Run("failed create frees the key", func(t *testing.T) {
		f := newIdemFixture(t)
		f.mgr.failNext = errdefs.New(errdefs.ErrUnavailable, "no room")
		if status, body, _ := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k"); status != http.StatusServiceUnavailable {
			t.Fatalf("failing create: %d %s", status, body)
		}
		status, body, h := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k")
		if status != http.StatusCreated || sandboxIDOf(t, body) != "sb2" || h.Get(ReplayedHeader) != "" {
			t.Fatalf("retry after a failure: %d %s, want a new sandbox sb2", status, body)
		}
	})
	t.Run("release the store refused is retried", func(t *testing.T) {
		f := newIdemFixture(t, func(st store.Store) store.Store { return &downReleases{Store: st, n: 2} })
		f.mgr.failNext = errdefs.New(errdefs.ErrUnavailable, "no room")
		if status, body, _ := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k"); status != http.StatusServiceUnavailable {
			t.Fatalf("failing create: %d %s", status, body)
		}
		// Another node sees the claim go once the store answers again.
		fp, _ := fingerprintOf(t, `{"templateID":"base"}`)
		deadline := time.Now().Add(10 * time.Second)
		for {
			claim := &store.IdempotencyKey{TeamID: "alpha", Key: "k", Fingerprint: fp, Owner: "node-b", CreatedAt: time.Now().UTC()}
			_, claimed, err := f.st.ClaimIdempotencyKey(t.Context(), claim, time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if claimed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the failed create's claim was never released")
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Run("sandbox gone", func(t *testing.T) {
		f := newIdemFixture(t)
		f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k")
		if err := f.st.DeleteSandbox(t.Context(), "sb1"); err != nil {
			t.Fatal(err)
		}
		status, body, _ := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k")
		if status != http.StatusConflict || !strings.Contains(body, "sb1") {
			t.Fatalf("retry after the sandbox went: %d %s, want 409 naming sb1", status, body)
		}
		checkErrorShape(t, "sandbox gone", status, body)
	})
	t.Run("waits for another process", func(t *testing.T) {
		f := newIdemFixture(t)
		fp, _ := fingerprintOf(t, `{"templateID":"base"}`)
		claim := &store.IdempotencyKey{TeamID: "alpha", Key: "k", Fingerprint: fp, Owner: "node-b", CreatedAt: time.Now().UTC()}
		if _, _, err := f.st.ClaimIdempotencyKey(t.Context(), claim, time.Time{}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := f.st.CreateSandbox(t.Context(), &store.Sandbox{ID: "other", TeamID: "alpha"}); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(300 * time.Millisecond)
			_ = f.st.CompleteIdempotencyKey(context.Background(), "alpha", "k", "other", http.StatusCreated, []byte(`{"sandboxID":"other"}`))
		}()
		status, body, _ := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k")
		if status != http.StatusCreated || sandboxIDOf(t, body) != "other" || f.mgr.creates() != 0 {
			t.Fatalf("retry while another process creates: %d %s, %d creates here", status, body, f.mgr.creates())
		}
	})
	t.Run("stale claim gives way", func(t *testing.T) {
		f := newIdemFixture(t)
		fp, _ := fingerprintOf(t, `{"templateID":"base"}`)
		claim := &store.IdempotencyKey{TeamID: "alpha", Key: "k", Fingerprint: fp, Owner: "dead", CreatedAt: time.Now().UTC().Add(-idempotencyStale - time.Minute)}
		if _, _, err := f.st.ClaimIdempotencyKey(t.Context(), claim, time.Time{}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		status, body, _ := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k")
		if status != http.StatusCreated || sandboxIDOf(t, body) != "sb1" {
			t.Fatalf("retry over a stale claim: %d %s, want a new sandbox", status, body)
		}
	})
}

// TestIdempotentOwnOrphan is not parallel: it slows the background
// release down so that only the take-over can free the key in time.
func TestIdempotentOwnOrphan(t *testing.T) {
	was := releaseRetry
	releaseRetry = time.Hour
	t.Cleanup(func() { releaseRetry = was })
	f := newIdemFixture(t, func(st store.Store) store.Store { return &downReleases{Store: st, n: 1} })
	f.srv.Client().Timeout = 10 * time.Second
	f.mgr.failNext = errdefs.New(errdefs.ErrUnavailable, "no room")
	if status, body, _ := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k"); status != http.StatusServiceUnavailable {
		t.Fatalf("failing create: %d %s", status, body)
	}
	status, body, h := f.create(t, "alpha", "/v2/sandboxes", `{"templateID":"base"}`, "k")
	if status != http.StatusCreated || sandboxIDOf(t, body) != "sb2" || h.Get(ReplayedHeader) != "" {
		t.Fatalf("retry after a failure whose release failed: %d %s, want a new sandbox sb2", status, body)
	}
}

func fingerprintOf(t *testing.T, body string) (string, error) {
	t.Helper()
	var b rest.NewSandbox
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	return fingerprint(true, &b)
}
