package cluster

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

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/store"
)

// fakeNode stands in for a node's HTTP API: it records what reaches it
// and answers with answer (by default a create's 201, recording the
// sandbox in the store as a node does).
type fakeNode struct {
	name   string
	srv    *httptest.Server
	st     store.Store
	mu     sync.Mutex
	seen   []*http.Request
	bodies []string
	answer func(w http.ResponseWriter, r *http.Request)
	// early, when set, answers before the body is read, when it returns
	// true (as a node without volumes refuses).
	early func(w http.ResponseWriter, r *http.Request) bool
	made  int
	// auth is, per request seen, the key hash its cluster signature
	// vouches for, "unsigned", or "refused: " and why.
	auth []string
}

func newFakeNode(t *testing.T, st store.Store, name string) *fakeNode {
	t.Helper()
	n := &fakeNode{name: name, st: st}
	n.srv = httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *fakeNode) serve(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	early := n.early
	n.mu.Unlock()
	if early != nil && early(w, r) {
		n.mu.Lock()
		n.seen, n.bodies, n.auth = append(n.seen, r), append(n.bodies, "(unread)"), append(n.auth, "(early)")
		n.mu.Unlock()
		return
	}
	body, _ := io.ReadAll(r.Body)
	auth := "unsigned"
	if r.Header.Get(clusterauth.Header) != "" {
		hash, err := testSigner.Verify(r)
		auth = hash
		if err != nil {
			auth = "refused: " + err.Error()
		}
	}
	n.mu.Lock()
	n.seen, n.bodies, n.auth = append(n.seen, r), append(n.bodies, string(body)), append(n.auth, auth)
	answer := n.answer
	n.mu.Unlock()
	if answer != nil {
		answer(w, r)
		return
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "sandboxes") {
		n.mu.Lock()
		n.made++
		id := fmt.Sprintf("%s-sb%d", n.name, n.made)
		n.mu.Unlock()
		_ = n.st.CreateSandbox(r.Context(), &store.Sandbox{ID: id, State: store.SandboxRunning, Node: n.name, StartedAt: time.Now()})
		writeJSON(w, http.StatusCreated, map[string]string{"sandboxID": id, "node": n.name})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"node": n.name, "path": r.URL.Path})
}

// requests returns what reached n, as "METHOD path".
func (n *fakeNode) requests() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, r := range n.seen {
		out = append(out, r.Method+" "+r.URL.Path)
	}
	return out
}

// register writes n's heartbeat: alive (heartbeat now) or long dead.
func (n *fakeNode) register(t *testing.T, alive bool, started time.Time, templates ...string) {
	t.Helper()
	beat := time.Now()
	if !alive {
		beat = beat.Add(-time.Hour)
	}
	err := n.st.PutNode(context.Background(), &store.Node{Name: n.name, AdvertiseURL: n.srv.URL, CPUs: 4,
		MemoryMB: 8192, Templates: templates, StartedAt: started, HeartbeatAt: beat})
	if err != nil {
		t.Fatal(err)
	}
}

// recorder keeps recorded events.
type recorder struct {
	mu  sync.Mutex
	evs []*store.Event
}

func (r *recorder) Record(_ context.Context, e *store.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
}

// testDeadAfter is the test APIs' --node-dead-after.
const testDeadAfter = 30 * time.Second

// newTestAPI is an API over st whose REST routes a real apiserver serves.
func newTestAPI(st store.Store, evs Recorder) *API { return newTestAPIAt(st, evs, nil) }

// newTestAPIAt is newTestAPI on clock c (nil: the real one).
func newTestAPIAt(st store.Store, evs Recorder, c *clock) *API {
	now := time.Now
	if c != nil {
		now = c.now
	}
	return New(Options{Store: st, Domain: "sb.test", DeadAfter: testDeadAfter,
		ReapEvery: time.Second, Events: evs, Now: now, Cluster: testSigner})
}

// testSigner holds the test cluster's secret, the API's and the fake
// nodes'.
var testSigner = func() *clusterauth.Signer {
	s, err := clusterauth.New("cluster-test-secret-0123456789abcdef", nil)
	if err != nil {
		panic(err)
	}
	return s
}()

// clock is the real clock moved by advance; with base set, it stands
// still at base but for advance.
type clock struct {
	mu   sync.Mutex
	base time.Time
	skew time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.base.IsZero() {
		return c.base.Add(c.skew)
	}
	return time.Now().Add(c.skew)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.skew += d
	c.mu.Unlock()
}

// do sends a request to h and returns the status and the decoded body.
func do(t *testing.T, h http.Handler, method, target, body string, header map[string]string) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

// teamKey stores a key of team and returns its secret.
func teamKey(t *testing.T, st store.Store, team string) string {
	t.Helper()
	secret, rec, err := apikey.Create(apikey.Spec{Name: "k-" + team, Team: team})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateAPIKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return secret
}

// keyHeader stores a key of the default team and returns the header that
// sends it.
func keyHeader(t *testing.T, st store.Store) map[string]string {
	t.Helper()
	return map[string]string{"X-API-KEY": teamKey(t, st, "")}
}
