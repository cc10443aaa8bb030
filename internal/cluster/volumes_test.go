package cluster

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// noVolumes answers as a node without volume storage: 501, before it
// reads the body.
func noVolumes(w http.ResponseWriter, r *http.Request) bool {
	httperr.Error(w, http.StatusNotImplemented, "volumes are not available on this server")
	return true
}

// TestVolumeRoutesRelay: the API role sends volume routes to a live node,
// passing over one that cannot serve volumes (501) or be reached, with
// the request's body whole for the next; the content routes keep their
// bearer (the volume's token, which the node checks), the control routes
// go signed with the key's hash as every REST route.
func TestVolumeRoutesRelay(t *testing.T) {
	const body = "the file's bytes"
	tests := []struct {
		name        string
		method      string
		target      string
		first       string // "ok", "501", "501 after reading", "507", "down"
		wantNode    string // the node whose answer the client gets
		wantStatus  int
		secondTried bool
	}{
		{"list", "GET", "/volumes", "ok", "first", 200, false},
		{"create on a node without volumes", "POST", "/volumes", "501", "second", 200, true},
		{"write on a node without volumes", "PUT", "/volumecontent/vol1/file?path=/f", "501", "second", 200, true},
		{"read, the first node down", "GET", "/volumecontent/vol1/file?path=/f", "down", "second", 200, true},
		{"write refused after the body went", "PUT", "/volumecontent/vol1/file?path=/f", "501 after reading", "first", 501, false},
		{"a full volume is full on every node", "PUT", "/volumecontent/vol1/file?path=/f", "507", "first", 507, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := sqlitetest.Open(t)
			first, second := newFakeNode(t, st, "first"), newFakeNode(t, st, "second")
			first.register(t, true, time.Unix(1, 0))
			second.register(t, true, time.Unix(2, 0))
			switch tc.first {
			case "501":
				first.early = noVolumes
			case "501 after reading":
				first.answer = func(w http.ResponseWriter, r *http.Request) { noVolumes(w, r) }
			case "507":
				first.answer = func(w http.ResponseWriter, r *http.Request) {
					httperr.Error(w, http.StatusInsufficientStorage, "the volume is full")
				}
			case "down":
				first.srv.Close()
			}
			key := teamKey(t, st, "")
			header := map[string]string{"X-API-KEY": key}
			content := strings.HasPrefix(tc.target, "/volumecontent/")
			if content {
				header = map[string]string{"Authorization": "Bearer the-volume-token"}
			}
			sent := body
			if tc.method == "GET" {
				sent = ""
			}
			code, got := do(t, newTestAPI(st, nil), tc.method, tc.target, sent, header)
			if code != tc.wantStatus || code == 200 && got["node"] != tc.wantNode {
				t.Fatalf("answer %d %v, want %d from %s", code, got, tc.wantStatus, tc.wantNode)
			}
			if tried := len(second.requests()) > 0; tried != tc.secondTried {
				t.Fatalf("second node got %v, want tried=%v", second.requests(), tc.secondTried)
			}
			n := first
			if tc.wantNode == "second" {
				n = second
			}
			wantAuth := apikey.Hash(key)
			if content {
				wantAuth = "Bearer the-volume-token"
			}
			checkRelayed(t, n, sent, wantAuth, content)
		})
	}
}

// checkRelayed fails unless the last request n got had body and, for a
// content route, the client's bearer, else a signature vouching for
// auth (a key's hash); and never the key.
func checkRelayed(t *testing.T, n *fakeNode, body, auth string, content bool) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	last := len(n.seen) - 1
	if n.bodies[last] != body {
		t.Errorf("node %s got body %q, want %q", n.name, n.bodies[last], body)
	}
	r := n.seen[last]
	if r.Header.Get("X-API-KEY") != "" {
		t.Errorf("the key reached node %s", n.name)
	}
	got := n.auth[last]
	if content {
		got = r.Header.Get("Authorization")
	}
	if got != auth {
		t.Errorf("node %s got authorization %q, want %q", n.name, got, auth)
	}
}

// TestVolumeRoutesPreferTheLastNode: once a node answered a volume route,
// the next goes to it first, so a cluster with one node that serves
// volumes asks the others once, not on every request.
func TestVolumeRoutesPreferTheLastNode(t *testing.T) {
	st := sqlitetest.Open(t)
	first, second := newFakeNode(t, st, "first"), newFakeNode(t, st, "second")
	first.register(t, true, time.Unix(1, 0))
	second.register(t, true, time.Unix(2, 0))
	first.early = noVolumes
	api, key := newTestAPI(st, nil), keyHeader(t, st)
	for i := range 3 {
		if code, got := do(t, api, "GET", "/volumes", "", key); code != 200 || got["node"] != "second" {
			t.Fatalf("request %d: %d %v, want the second node's answer", i, code, got)
		}
	}
	if got := first.requests(); len(got) != 1 {
		t.Errorf("the node without volumes was asked %d times, want once", len(got))
	}
	// The last node refusing too is no node to prefer.
	second.early = noVolumes
	if code, _ := do(t, api, "GET", "/volumes", "", key); code != http.StatusNotImplemented {
		t.Fatalf("with no node serving volumes: %d, want 501", code)
	}
	first.early = nil
	asked := len(second.requests())
	if code, got := do(t, api, "GET", "/volumes", "", key); code != 200 || got["node"] != "first" {
		t.Fatalf("once the first serves volumes: %d %v, want its answer", code, got)
	}
	if len(second.requests()) != asked {
		t.Errorf("the node that answered 501 last was asked first")
	}
}

// TestVolumeRoutesWithoutNodes: no live node, or none with volumes.
func TestVolumeRoutesWithoutNodes(t *testing.T) {
	st := sqlitetest.Open(t)
	api, key := newTestAPI(st, nil), keyHeader(t, st)
	if code, got := do(t, api, "GET", "/volumes", "", key); code != http.StatusServiceUnavailable ||
		!strings.Contains(got["message"].(string), "no node is alive") {
		t.Errorf("without nodes: %d %v, want 503 saying so", code, got)
	}
	only := newFakeNode(t, st, "only")
	only.register(t, true, time.Unix(1, 0))
	only.early = noVolumes
	if code, got := do(t, api, "POST", "/volumes", `{"name":"x"}`, key); code != http.StatusNotImplemented ||
		!strings.Contains(got["message"].(string), "volumes are not available") {
		t.Errorf("with a node without volumes: %d %v, want its 501", code, got)
	}
	// Without a token the API role answers itself, as a node would.
	code, got := do(t, api, "GET", "/volumecontent/vol1/dir?path=/", "", key)
	if code != http.StatusUnauthorized || len(only.requests()) != 1 {
		t.Errorf("content route with a key and no token: %d %v, node asked %v; want 401 here", code, got, only.requests())
	}
}

// TestVolumeContentByAPIHost: behind TLS with Host routing the SDK sends
// the content API to api.<domain>, which is the REST API, not a sandbox.
func TestVolumeContentByAPIHost(t *testing.T) {
	st := sqlitetest.Open(t)
	n := newFakeNode(t, st, "n")
	n.register(t, true, time.Unix(1, 0))
	code, got := do(t, newTestAPI(st, nil), "GET", "/volumecontent/vol1/dir?path=/", "",
		map[string]string{"Host": "api.sb.test", "Authorization": "Bearer tok"})
	if code != 200 || got["path"] != "/volumecontent/vol1/dir" {
		t.Errorf("api.<domain>: %d %v, want the node's answer to the content route", code, got)
	}
}
