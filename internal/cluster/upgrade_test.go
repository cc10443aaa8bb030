package cluster

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/proxy"
	"github.com/warren-sandbox/warren/internal/proxy/proxytest"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// nodeSandbox is a node's one private sandbox "sb" at 127.0.0.1, whose
// proxied connections it tracks as lifecycle does.
type nodeSandbox struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func (s *nodeSandbox) Resolve(_ context.Context, id string) (*proxy.Target, error) {
	if id != "sb" {
		return nil, errdefs.New(errdefs.ErrNotFound, "sandbox not found")
	}
	return &proxy.Target{ID: id, IP: netip.MustParseAddr("127.0.0.1"), TrafficAccessToken: "tok", Track: s.track}, nil
}

func (*nodeSandbox) LiveTokens() map[string]string { return nil }

func (s *nodeSandbox) track(c net.Conn) func() {
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}
}

// kill closes the sandbox's tracked connections, as a kill or pause does.
func (s *nodeSandbox) kill() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.conns)
	for c := range s.conns {
		_ = c.Close()
	}
	clear(s.conns)
	return n
}

// relayToRealNode is an API (observing requests, as the API role does)
// in front of a node that runs warren's own proxy to a websocket-like
// service, with its sandbox.
func relayToRealNode(t *testing.T) (api *API, apiAddr string, sb *nodeSandbox, backend *proxytest.Backend) {
	t.Helper()
	st := sqlitetest.Open(t)
	backend = proxytest.NewBackend(t)
	sb = &nodeSandbox{conns: map[net.Conn]struct{}{}}
	node := httptest.NewServer(proxy.New(sb, http.NotFoundHandler(), "sb.test"))
	t.Cleanup(node.Close)
	ctx := context.Background()
	err := st.PutNode(ctx, &store.Node{Name: "n", AdvertiseURL: node.URL, CPUs: 4, MemoryMB: 8192,
		StartedAt: time.Unix(1, 0), HeartbeatAt: time.Now()})
	if err == nil {
		err = st.CreateSandbox(ctx, &store.Sandbox{ID: "sb", Node: "n", State: store.SandboxRunning})
	}
	if err != nil {
		t.Fatal(err)
	}
	api = New(Options{Store: st, Domain: "sb.test", DeadAfter: testDeadAfter, ReapEvery: time.Second,
		Cluster: testSigner, ObserveRequest: func(string, int, time.Duration) {}})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, srv.Listener.Addr().String(), sb, backend
}

// TestUpgradeRelayedToTheNode: the API role relays a websocket upgrade
// for a sandbox's port (noVNC's stream) to its node and on, both ways,
// with the node's traffic token check (cookie) in force; the stream ends
// when the node cuts the sandbox's connections (kill, pause) and when the
// node is found dead.
func TestUpgradeRelayedToTheNode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cookie string
		status int
		end    string // "kill" or "node lost"
	}{
		{"no token", "", http.StatusForbidden, ""},
		{"cookie, then kill", "e2b_traffic_token=tok", http.StatusSwitchingProtocols, "kill"},
		{"cookie, then node lost", "e2b_traffic_token=tok", http.StatusSwitchingProtocols, "node lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, addr, sb, backend := relayToRealNode(t)
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			header := http.Header{}
			if tc.cookie != "" {
				header.Set("Cookie", tc.cookie)
			}
			host := strconv.Itoa(backend.Port()) + "-sb.sb.test"
			resp, br, err := proxytest.Upgrade(conn, host, "/websockify", header)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("upgrade answered %s, want %d", resp.Status, tc.status)
			}
			if tc.status != http.StatusSwitchingProtocols {
				return
			}
			if err := proxytest.Echo(conn, br, "through the API role"); err != nil {
				t.Fatal(err)
			}
			if seen := backend.Seen(); len(seen) != 1 || seen[0].Header.Get("Cookie") != "" {
				t.Fatalf("the sandbox got %+v, want the upgrade without the token", seen)
			}
			switch tc.end {
			case "kill":
				if n := sb.kill(); n != 1 {
					t.Fatalf("the node tracked %d connection(s) to the sandbox, want 1", n)
				}
			case "node lost":
				if n := api.fwd.cut("n"); n != 1 {
					t.Fatalf("the API cut %d request(s) to the node, want the stream's 1", n)
				}
			}
			if err := proxytest.Ended(conn, br, 10*time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTrafficTokenThroughTheAPI: a browser's one-time token parameter is
// answered, through the API role, with the node's redirect and cookie
// (Secure when the client came by TLS to a front), and the cookie then
// lets it in; neither reaches the sandbox.
func TestTrafficTokenThroughTheAPI(t *testing.T) {
	_, addr, _, backend := relayToRealNode(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	host := strconv.Itoa(backend.Port()) + "-sb.sb.test"
	tests := []struct {
		name, target string
		header       map[string]string
		status       int
		location     string
		setCookie    string
	}{
		{"parameter", "/vnc.html?autoconnect=true&e2b_traffic_token=tok", map[string]string{"X-Forwarded-Proto": "https"}, 303,
			"/vnc.html?autoconnect=true", "e2b_traffic_token=tok; Path=/; HttpOnly; Secure; SameSite=Lax"},
		{"wrong parameter", "/vnc.html?e2b_traffic_token=nope", nil, 403, "", ""},
		{"cookie", "/vnc.html", map[string]string{"Cookie": "e2b_traffic_token=tok; other=1"}, 200, "", ""},
		{"wrong cookie", "/vnc.html", map[string]string{"Cookie": "e2b_traffic_token=nope"}, 403, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(backend.Seen())
			req, _ := http.NewRequest("GET", "http://"+addr+tc.target, nil)
			req.Host = host
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.location ||
				strings.Join(resp.Header.Values("Set-Cookie"), "\n") != tc.setCookie {
				t.Fatalf("answer %s Location %q Set-Cookie %q %s; want %d %q %q", resp.Status, resp.Header.Get("Location"),
					resp.Header.Values("Set-Cookie"), body, tc.status, tc.location, tc.setCookie)
			}
			seen := backend.Seen()[before:]
			if tc.status != http.StatusOK {
				if len(seen) != 0 {
					t.Fatalf("the sandbox got %+v", seen)
				}
				return
			}
			if len(seen) != 1 || seen[0].RequestURI != "/vnc.html" || seen[0].Header.Get("Cookie") != "other=1" {
				t.Fatalf("the sandbox got %+v, want /vnc.html with Cookie other=1", seen)
			}
		})
	}
}
