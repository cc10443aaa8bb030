package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

func TestCreatesSpreadOverNodes(t *testing.T) {
	st := sqlitetest.Open(t)
	var nodes []*fakeNode
	for i, name := range []string{"a", "b", "c"} {
		n := newFakeNode(t, st, name)
		n.register(t, true, time.Unix(int64(i), 0), "base")
		nodes = append(nodes, n)
	}
	api := newTestAPI(st, nil)
	secret := teamKey(t, st, "")
	for i := range 6 {
		code, body := do(t, api, "POST", "/sandboxes", `{"templateID":"base"}`, map[string]string{"X-API-KEY": secret})
		if code != http.StatusCreated {
			t.Fatalf("create %d: %d %v", i, code, body)
		}
	}
	for _, n := range nodes {
		if got := len(n.requests()); got != 2 {
			t.Errorf("node %s got %d creates, want 2 (6 creates over 3 equal nodes)", n.name, got)
		}
		for _, b := range n.bodies {
			if b != `{"templateID":"base"}` {
				t.Errorf("node %s got body %q, want the request's", n.name, b)
			}
		}
		if h := n.seen[0].Header.Get("X-API-KEY"); h != "" || n.auth[0] != apikey.Hash(secret) {
			t.Errorf("node %s got X-API-KEY %q and a signature naming %q: the key's hash must reach it, signed, and the key not", n.name, h, n.auth[0])
		}
	}
}

func TestCreateTriesTheNextNode(t *testing.T) {
	tests := []struct {
		name      string
		status    int  // what the first node answers; 0: it is down
		wantMoved bool // the create goes on to the second node
	}{
		{"full", http.StatusServiceUnavailable, true},
		{"no disk", http.StatusInsufficientStorage, true},
		{"no volumes here", http.StatusNotImplemented, true},
		{"down", 0, true},
		{"team quota", http.StatusTooManyRequests, false},
		{"bad request", http.StatusBadRequest, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := sqlitetest.Open(t)
			first, second := newFakeNode(t, st, "first"), newFakeNode(t, st, "second")
			first.register(t, true, time.Unix(1, 0), "base")
			second.register(t, true, time.Unix(2, 0)) // no cache: tried second
			first.answer = func(w http.ResponseWriter, r *http.Request) {
				httperr.Error(w, tc.status, "refused by first")
			}
			if tc.status == 0 {
				first.srv.Close()
			}
			code, body := do(t, newTestAPI(st, nil), "POST", "/v2/sandboxes", `{"templateID":"base"}`, keyHeader(t, st))
			moved := len(second.requests()) == 1
			if moved != tc.wantMoved {
				t.Fatalf("second node got %v, want moved=%v (answer %d %v)", second.requests(), tc.wantMoved, code, body)
			}
			if tc.wantMoved && code != http.StatusCreated {
				t.Errorf("status %d %v, want the second node's 201", code, body)
			}
			if !tc.wantMoved && (code != tc.status || body["message"] != "refused by first") {
				t.Errorf("answer %d %v, want the first node's %d as it was", code, body, tc.status)
			}
		})
	}
}

func TestCreateLastRefusalIsAnswered(t *testing.T) {
	st := sqlitetest.Open(t)
	only := newFakeNode(t, st, "only")
	only.register(t, true, time.Unix(1, 0))
	only.answer = func(w http.ResponseWriter, r *http.Request) {
		httperr.Error(w, http.StatusServiceUnavailable, "host is full")
	}
	code, body := do(t, newTestAPI(st, nil), "POST", "/sandboxes", `{"templateID":"base"}`, keyHeader(t, st))
	if code != http.StatusServiceUnavailable || body["message"] != "host is full" {
		t.Errorf("answer %d %v, want the last node's own 503", code, body)
	}
}

func TestCreateWithoutNodes(t *testing.T) {
	st := sqlitetest.Open(t)
	dead := newFakeNode(t, st, "dead")
	dead.register(t, false, time.Unix(1, 0), "base")
	code, body := do(t, newTestAPI(st, nil), "POST", "/sandboxes", `{"templateID":"base"}`, keyHeader(t, st))
	if code != http.StatusServiceUnavailable || !strings.Contains(body["message"].(string), "no node is alive") ||
		body["error_code"] != httperr.CapacityUnavailable {
		t.Errorf("answer %d %v, want 503 naming the missing nodes, error_code %s", code, body, httperr.CapacityUnavailable)
	}
	if len(dead.requests()) != 0 {
		t.Errorf("a dead node got %v", dead.requests())
	}
}

func TestCreateFromSnapshotGoesToItsNode(t *testing.T) {
	st := sqlitetest.Open(t)
	a, b := newFakeNode(t, st, "a"), newFakeNode(t, st, "b")
	a.register(t, true, time.Unix(1, 0), "base")
	b.register(t, true, time.Unix(2, 0), "base", "snap1")
	ctx := context.Background()
	if err := st.CreateSnapshot(ctx, &store.Snapshot{ID: "snap1", Names: []string{"mine"}, MemoryMB: 512, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	c := &clock{}
	api := newTestAPIAt(st, nil, c)
	key := keyHeader(t, st)
	for range 3 {
		if code, body := do(t, api, "POST", "/sandboxes", `{"templateID":"mine"}`, key); code != http.StatusCreated {
			t.Fatalf("create from snapshot: %d %v", code, body)
		}
	}
	if code, body := do(t, api, "DELETE", "/templates/mine", "", key); code != http.StatusOK {
		t.Errorf("delete of the snapshot: %d %v", code, body)
	}
	if len(a.requests()) != 0 || len(b.requests()) != 4 {
		t.Errorf("a got %v, b got %v: every create from b's snapshot, and its delete, must go to b", a.requests(), b.requests())
	}
	// Just taken: no heartbeat lists it yet, but its source runs on a.
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "src", Node: "a", State: store.SandboxRunning}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSnapshot(ctx, &store.Snapshot{ID: "snap2", SandboxID: "src", MemoryMB: 512, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, api, "POST", "/sandboxes", `{"templateID":"snap2"}`, key); code != http.StatusCreated || len(a.requests()) != 1 {
		t.Errorf("create from a fresh snapshot: %d %v, a got %v; want it on its source's node", code, body, a.requests())
	}
	a.register(t, true, time.Unix(1, 0), "base")
	c.advance(testDeadAfter + nodesTTL + time.Second) // b silent since; a just beat
	a.register(t, true, time.Unix(1, 0), "base")
	code, body := do(t, api, "POST", "/sandboxes", `{"templateID":"snap1"}`, key)
	if code != http.StatusServiceUnavailable || !strings.Contains(body["message"].(string), "not alive") ||
		body["error_code"] != httperr.NoCompatibleNode {
		t.Errorf("snapshot on a dead node: %d %v, want 503 %s", code, body, httperr.NoCompatibleNode)
	}
}

// TestCreateBodyTooLarge: the API role refuses a create body past its
// limit as a node would, 413 too_large, without asking any node.
func TestCreateBodyTooLarge(t *testing.T) {
	st := sqlitetest.Open(t)
	n := newFakeNode(t, st, "n")
	n.register(t, true, time.Unix(1, 0), "base")
	big := `{"templateID":"base","metadata":{"k":"` + strings.Repeat("x", maxCreateBody) + `"}}`
	code, body := do(t, newTestAPI(st, nil), "POST", "/v2/sandboxes", big, keyHeader(t, st))
	if code != http.StatusRequestEntityTooLarge || body["error_code"] != httperr.TooLarge {
		t.Errorf("answer %d %v, want 413 %s", code, body, httperr.TooLarge)
	}
	if len(n.requests()) != 0 {
		t.Errorf("the node got %v", n.requests())
	}
}

func TestSandboxRoutesGoToTheOwner(t *testing.T) {
	st := sqlitetest.Open(t)
	a, b := newFakeNode(t, st, "a"), newFakeNode(t, st, "b")
	a.register(t, true, time.Unix(1, 0))
	b.register(t, true, time.Unix(2, 0))
	ctx := context.Background()
	for id, node := range map[string]string{"sba": "a", "sbb": "b"} {
		if err := st.CreateSandbox(ctx, &store.Sandbox{ID: id, Node: node, State: store.SandboxRunning, EnvdAccessToken: "tok-" + id}); err != nil {
			t.Fatal(err)
		}
	}
	api := newTestAPI(st, nil)
	secret := teamKey(t, st, "")
	key := map[string]string{"X-API-KEY": secret}
	bearer := map[string]string{"Authorization": "Bearer " + secret}
	hash := apikey.Hash(secret)
	// A REST route reaches the node without the key, signed with its
	// hash (wantAuth); traffic is not signed, and envd's loses the key.
	tests := []struct {
		name, method, target string
		header               map[string]string
		node                 *fakeNode
		wantPath             string
		wantAuth             string
		wantKept             string // a header that must reach the node as sent
	}{
		{"get", "GET", "/sandboxes/sbb", key, b, "/sandboxes/sbb", hash, ""},
		{"get, key as bearer", "GET", "/sandboxes/sbb", bearer, b, "/sandboxes/sbb", hash, ""},
		{"kill", "DELETE", "/sandboxes/sba", key, a, "/sandboxes/sba", hash, ""},
		{"pause", "POST", "/sandboxes/sbb/pause", key, b, "/sandboxes/sbb/pause", hash, ""},
		{"v2 logs", "GET", "/v2/sandboxes/sba/logs?cursor=5", key, a, "/v2/sandboxes/sba/logs", hash, ""},
		{"envd by header", "POST", "/process.Process/Start", map[string]string{"E2b-Sandbox-Id": "sbb", "E2b-Sandbox-Port": "49983", "X-API-KEY": secret, "X-Access-Token": "tok-sbb"}, b, "/process.Process/Start", "unsigned", "X-Access-Token"},
		{"port by host", "GET", "/index.html", map[string]string{"Host": "8080-sba.sb.test", "Authorization": "Bearer the-app's-own"}, a, "/index.html", "unsigned", "Authorization"},
		{"signed file", "GET", signedURL("tok-sbb"), nil, b, "/files", "unsigned", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.node.requests())
			code, body := do(t, api, tc.method, tc.target, "", tc.header)
			got := tc.node.requests()
			if code != http.StatusOK || len(got) != before+1 || got[len(got)-1] != tc.method+" "+tc.wantPath {
				t.Fatalf("answer %d %v; node %s got %v, want %s %s", code, body, tc.node.name, got, tc.method, tc.wantPath)
			}
			r := tc.node.seen[len(tc.node.seen)-1]
			if h := tc.header["Host"]; h != "" && r.Host != h {
				t.Errorf("node got Host %q, want %q kept for its own routing", r.Host, h)
			}
			if got := tc.node.auth[len(tc.node.auth)-1]; got != tc.wantAuth {
				t.Errorf("node's check of the cluster signature: %q, want %q", got, tc.wantAuth)
			}
			if k := r.Header.Get("X-API-KEY"); k != "" || strings.Contains(r.Header.Get("Authorization"), secret) {
				t.Errorf("the client's key reached the node: X-API-KEY %q, Authorization %q", k, r.Header.Get("Authorization"))
			}
			if h := tc.wantKept; h != "" && r.Header.Get(h) != tc.header[h] {
				t.Errorf("node got %s %q, want %q as sent", h, r.Header.Get(h), tc.header[h])
			}
		})
	}
	signed := b.seen[len(b.seen)-1]
	if signed.Header.Get("E2b-Sandbox-Id") != "sbb" || signed.Header.Get("E2b-Sandbox-Port") != "49983" {
		t.Errorf("signed file URL reached the node with headers %v: it must name the sandbox", signed.Header)
	}
}

func signedURL(token string) string {
	exp := "9999999999"
	return "/files?path=%2Fhome%2Fuser%2Fa&username=user&signature_expiration=" + exp +
		"&signature=" + url.QueryEscape(wire.SignFileURL("/home/user/a", "read", "user", token, exp))
}

func TestSandboxRouteErrors(t *testing.T) {
	st := sqlitetest.Open(t)
	dead := newFakeNode(t, st, "dead")
	dead.register(t, false, time.Unix(1, 0))
	for id, team := range map[string]string{"lost": "", "theirs": "other"} {
		if err := st.CreateSandbox(context.Background(), &store.Sandbox{ID: id, Node: "dead", State: store.SandboxPaused, TeamID: team}); err != nil {
			t.Fatal(err)
		}
	}
	api := newTestAPI(st, nil)
	key := map[string]string{"X-API-KEY": teamKey(t, st, "")}
	tests := []struct {
		name, method, target string
		header               map[string]string
		wantCode             int
		wantMsg              string
		wantErrorCode        string
	}{
		{"no key", "DELETE", "/sandboxes/nope", nil, 401, "missing API key", "unauthenticated"},
		{"wrong key", "POST", "/sandboxes/lost/connect", map[string]string{"X-API-KEY": "e2b_0123456789abcdef0123456789abcdef01234567"}, 401, "invalid API key", "unauthenticated"},
		{"unknown sandbox", "GET", "/sandboxes/nope", key, 404, `sandbox "nope" not found`, "not_found"},
		{"another team's", "GET", "/sandboxes/theirs", key, 404, `sandbox "theirs" not found`, "not_found"},
		{"unknown sandbox traffic", "GET", "/health", map[string]string{"Host": "49983-nope.sb.test"}, 502, "The sandbox was not found", "sandbox_not_found"},
		{"dead node", "POST", "/sandboxes/lost/resume", key, 503, `runs on node "dead", which is not answering`, "unavailable"},
		{"dead node traffic", "GET", "/", map[string]string{"E2b-Sandbox-Id": "lost", "E2b-Sandbox-Port": "80"}, 502, "not answering", "bad_gateway"},
		{"bad port header", "GET", "/", map[string]string{"E2b-Sandbox-Id": "lost", "E2b-Sandbox-Port": "x"}, 400, "E2b-Sandbox-Port", "invalid_argument"},
		{"signature of nothing", "GET", signedURL("other"), nil, 401, "matches no running sandbox", "unauthenticated"},
		{"expired signature", "GET", "/files?path=a&signature=v1_x&signature_expiration=1000", nil, 401, "expired", "unauthenticated"},
		{"malformed signature", "GET", "/files?path=a&signature=nope", nil, 401, "invalid signature", "unauthenticated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, api, tc.method, tc.target, "", tc.header)
			msg, _ := body["message"].(string)
			if code != tc.wantCode || !strings.Contains(msg, tc.wantMsg) || body["error_code"] != tc.wantErrorCode {
				t.Errorf("answer %d %v, want %d with %q, error_code %q", code, body, tc.wantCode, tc.wantMsg, tc.wantErrorCode)
			}
		})
	}
	if len(dead.requests()) != 0 {
		t.Errorf("a dead node got %v", dead.requests())
	}
}

func TestBuildsGoToTheOldestNode(t *testing.T) {
	st := sqlitetest.Open(t)
	young, old := newFakeNode(t, st, "a-young"), newFakeNode(t, st, "z-old")
	young.register(t, true, time.Unix(100, 0))
	old.register(t, true, time.Unix(1, 0))
	api := newTestAPI(st, nil)
	key := keyHeader(t, st)
	for _, req := range [][2]string{
		{"POST", "/v3/templates"}, {"GET", "/templates/t1/files/abc"}, {"PUT", "/templates/t1/files/abc"},
		{"POST", "/v2/templates/t1/builds/b1"}, {"GET", "/templates/t1/builds/b1/status"}, {"POST", "/templates/tags"},
		{"DELETE", "/templates/t1"}, {"POST", "/images"}, {"GET", "/images"},
	} {
		if code, body := do(t, api, req[0], req[1], "{}", key); code != http.StatusOK {
			t.Errorf("%s %s: %d %v", req[0], req[1], code, body)
		}
	}
	if len(young.requests()) != 0 || len(old.requests()) != 9 {
		t.Errorf("young got %v, old got %v: builds go to the node that started first", young.requests(), old.requests())
	}
	for _, local := range [][2]string{{"GET", "/templates"}, {"GET", "/snapshots"}, {"GET", "/v2/sandboxes"}, {"GET", "/usage"}} {
		if code, body := do(t, api, local[0], local[1], "", key); code != http.StatusOK {
			t.Errorf("%s %s answered %d %v, want the API's own (store) answer", local[0], local[1], code, body)
		}
	}
	if len(young.requests())+len(old.requests()) != 9 {
		t.Errorf("young got %v, old got %v: what the store answers goes to no node", young.requests(), old.requests())
	}
}

func TestHealth(t *testing.T) {
	st := sqlitetest.Open(t)
	api := newTestAPI(st, nil)
	if code, _ := do(t, api, "GET", "/health", "", nil); code != http.StatusServiceUnavailable {
		t.Errorf("health without nodes: %d, want 503", code)
	}
	n := newFakeNode(t, st, "n")
	n.register(t, true, time.Unix(1, 0))
	time.Sleep(nodesTTL)
	if code, _ := do(t, api, "GET", "/health", "", nil); code != http.StatusOK {
		t.Errorf("health with a live node: %d, want 200", code)
	}
}

func TestBatchMetricsMergesNodes(t *testing.T) {
	st := sqlitetest.Open(t)
	var nodes []*fakeNode
	for i, name := range []string{"a", "b"} {
		n := newFakeNode(t, st, name)
		nodes = append(nodes, n)
		n.register(t, true, time.Unix(int64(i), 0))
		n.answer = func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]any{"sandboxes": map[string]any{"sb-" + name: map[string]int{"cpuCount": 1}}})
		}
	}
	api := newTestAPI(st, nil)
	if code, body := do(t, api, "GET", "/sandboxes/metrics?sandbox_ids=sb-a", "", nil); code != http.StatusUnauthorized {
		t.Errorf("without a key: %d %v, want 401 before any node is asked", code, body)
	}
	secret := teamKey(t, st, "")
	code, body := do(t, api, "GET", "/sandboxes/metrics?sandbox_ids=sb-a,sb-b", "", map[string]string{"X-API-KEY": secret})
	got, _ := body["sandboxes"].(map[string]any)
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if code != http.StatusOK || !slices.Equal(ids, []string{"sb-a", "sb-b"}) {
		t.Errorf("answer %d %v, want both nodes' sandboxes", code, body)
	}
	for _, n := range nodes { // asked without the key, signed with its hash
		if len(n.seen) != 1 || n.seen[0].Header.Get("X-API-KEY") != "" || n.auth[0] != apikey.Hash(secret) {
			t.Errorf("node %s was asked %d times, the last with the signature's verdict %q", n.name, len(n.seen), n.auth)
		}
	}
}

// TestRequestsAreObserved: the API role reports each request's route
// (apiserver's pattern for a REST route, relayed or not) and status.
func TestRequestsAreObserved(t *testing.T) {
	st := sqlitetest.Open(t)
	n := newFakeNode(t, st, "n")
	n.register(t, true, time.Unix(1, 0))
	if err := st.CreateSandbox(context.Background(), &store.Sandbox{ID: "sb", Node: "n", State: store.SandboxRunning}); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []string
	)
	observe := func(route string, status int, _ time.Duration) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %d", route, status))
		mu.Unlock()
	}
	api := New(Options{Store: st, Domain: "sb.test", DeadAfter: testDeadAfter, ReapEvery: time.Second,
		Cluster: testSigner, ObserveRequest: observe, REST: apiserver.Options{ObserveRequest: observe}})
	key := keyHeader(t, st)
	do(t, api, "POST", "/sandboxes", `{"templateID":"base"}`, key)
	do(t, api, "GET", "/sandboxes/nope", "", key)
	do(t, api, "GET", "/templates", "", key) // the store's
	do(t, api, "GET", "/", "", map[string]string{"Host": "8080-sb.sb.test"})
	want := []string{"POST /sandboxes 201", "GET /sandboxes/{id} 404", "GET /templates 200", "sandbox traffic 200"}
	if !slices.Equal(seen, want) {
		t.Errorf("observed %v, want %v", seen, want)
	}
}
