package proxy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/proxy/proxytest"
)

// tokenResolver resolves the ids it knows to sandboxes at 127.0.0.1 with
// their traffic token ("" for a public one).
type tokenResolver map[string]string

func (r tokenResolver) Resolve(_ context.Context, id string) (*Target, error) {
	token, ok := r[id]
	if !ok {
		return nil, errdefs.New(errdefs.ErrNotFound, "sandbox not found")
	}
	return &Target{ID: id, IP: netip.MustParseAddr("127.0.0.1"), TrafficAccessToken: token}, nil
}

func (tokenResolver) LiveTokens() map[string]string { return nil }

// noRedirects is a client that shows redirects instead of following them.
func noRedirects(tr *http.Transport) *http.Client {
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// dialTo sends every connection to addr, whatever the URL's host.
func dialTo(addr string) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
}

// TestTrafficToken: a private sandbox's port takes its traffic token as
// E2B's header, or (for browsers) once as a query parameter swapped by a
// redirect for a host-only cookie, then as that cookie; the token never
// reaches the sandbox, other cookies do.
func TestTrafficToken(t *testing.T) {
	t.Parallel()
	backend := proxytest.NewBackend(t)
	h := New(tokenResolver{"priv": "tok-priv", "other": "tok-other", "pub": ""}, http.NotFoundHandler(), testDomain)
	plainAddr := serve(t, h, func(ln net.Listener) net.Listener { return ln })
	tlsAddr, pool := serveTLS(t, h)
	plain := noRedirects(&http.Transport{DialContext: dialTo(plainAddr)})
	secure := noRedirects(&http.Transport{DialContext: dialTo(tlsAddr), TLSClientConfig: &tls.Config{RootCAs: pool}})
	port := strconv.Itoa(backend.Port())
	const cookie = "e2b_traffic_token=tok-priv; Path=/; HttpOnly; SameSite=Lax"
	tests := []struct {
		name, id, target string
		header           map[string]string
		tls              bool
		status           int
		location         string // the redirect's, when 303
		setCookie        string
		backendURI       string // what reaches the sandbox; "" for nothing
		backendCookie    string
	}{
		{"header ok", "priv", "/", map[string]string{"E2b-Traffic-Access-Token": "tok-priv"}, false, 200, "", "", "/", ""},
		{"query ok", "priv", "/vnc.html?autoconnect=true&e2b_traffic_token=tok-priv&resize=scale", nil, false, 303,
			"/vnc.html?autoconnect=true&resize=scale", cookie, "", ""},
		{"query ok over tls", "priv", "/vnc.html?e2b_traffic_token=tok-priv", nil, true, 303,
			"/vnc.html", "e2b_traffic_token=tok-priv; Path=/; HttpOnly; Secure; SameSite=Lax", "", ""},
		{"query ok behind a tls front", "priv", "/?e2b_traffic_token=tok-priv", map[string]string{"X-Forwarded-Proto": "https"}, false, 303,
			"/", "e2b_traffic_token=tok-priv; Path=/; HttpOnly; Secure; SameSite=Lax", "", ""},
		{"cookie ok", "priv", "/websockify?x=1", map[string]string{"Cookie": "e2b_traffic_token=tok-priv"}, false, 200, "", "", "/websockify?x=1", ""},
		{"other cookies forwarded", "priv", "/", map[string]string{"Cookie": "a=1; e2b_traffic_token=tok-priv; b=2"}, false, 200, "", "", "/", "a=1; b=2"},
		{"wrong query", "priv", "/vnc.html?e2b_traffic_token=nope", nil, false, 403, "", "", "", ""},
		{"wrong cookie", "priv", "/", map[string]string{"Cookie": "e2b_traffic_token=nope"}, false, 403, "", "", "", ""},
		{"cookie of another sandbox", "priv", "/", map[string]string{"Cookie": "e2b_traffic_token=tok-other"}, false, 403, "", "", "", ""},
		{"wrong header, right cookie", "priv", "/", map[string]string{"E2b-Traffic-Access-Token": "nope", "Cookie": "e2b_traffic_token=tok-priv"}, false, 403, "", "", "", ""},
		{"no token", "priv", "/", nil, false, 403, "", "", "", ""},
		{"public sandbox", "pub", "/a?b=c", nil, false, 200, "", "", "/a?b=c", ""},
		{"public sandbox, parameter dropped", "pub", "/a?e2b_traffic_token=x&b=c", map[string]string{"Cookie": "s=1; e2b_traffic_token=x"}, false, 200, "", "", "/a?b=c", "s=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := plain
			if tc.tls {
				client = secure
			}
			before := len(backend.Seen())
			req, err := http.NewRequest("GET", "http://"+port+"-"+tc.id+"."+testDomain, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.tls {
				req.URL.Scheme = "https"
			}
			req.URL.Opaque, req.URL.RawQuery, _ = strings.Cut(tc.target, "?") // sent as it is
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("answer %s %s, want %d", resp.Status, body, tc.status)
			}
			checkAnswer(t, resp, body, tc.location, tc.setCookie)
			seen := backend.Seen()[before:]
			if tc.backendURI == "" {
				if len(seen) != 0 {
					t.Fatalf("the sandbox got %+v, want nothing", seen)
				}
				return
			}
			if len(seen) != 1 || seen[0].RequestURI != tc.backendURI || seen[0].Header.Get("Cookie") != tc.backendCookie {
				t.Fatalf("the sandbox got %+v, want %s with Cookie %q", seen, tc.backendURI, tc.backendCookie)
			}
			if v := seen[0].Header.Values("E2b-Traffic-Access-Token"); len(v) != 0 {
				t.Fatalf("the token header reached the sandbox: %q", v)
			}
		})
	}
}

// checkAnswer checks a redirect's target and cookie, and a refusal's body.
func checkAnswer(t *testing.T, resp *http.Response, body []byte, location, setCookie string) {
	t.Helper()
	if got := resp.Header.Get("Location"); got != location {
		t.Errorf("Location %q, want %q", got, location)
	}
	if got := strings.Join(resp.Header.Values("Set-Cookie"), "\n"); got != setCookie {
		t.Errorf("Set-Cookie %q, want %q", got, setCookie)
	}
	if resp.StatusCode == http.StatusForbidden {
		var b httperr.Body
		if err := json.Unmarshal(body, &b); err != nil || b.Code != 403 || b.Message != "missing or invalid traffic access token" {
			t.Errorf("refusal %s, want E2B's 403 JSON", body)
		}
	}
	if l, err := url.Parse(location); err != nil || l.Host != "" {
		t.Errorf("Location %q leaves the host", location)
	}
}

// TestTrafficTokenUpgrade: a websocket handshake, which cannot follow a
// redirect, takes the cookie or the parameter as they are; the sandbox
// sees neither.
func TestTrafficTokenUpgrade(t *testing.T) {
	t.Parallel()
	backend := proxytest.NewBackend(t)
	addr := serve(t, New(tokenResolver{"priv": "tok-priv"}, http.NotFoundHandler(), testDomain),
		func(ln net.Listener) net.Listener { return ln })
	host := strconv.Itoa(backend.Port()) + "-priv." + testDomain
	tests := []struct {
		name, target, cookie string
		status               int
	}{
		{"cookie", "/websockify", "e2b_traffic_token=tok-priv", 101},
		{"parameter", "/websockify?e2b_traffic_token=tok-priv", "", 101},
		{"wrong cookie", "/websockify", "e2b_traffic_token=tok-other", 403},
		{"wrong parameter", "/websockify?e2b_traffic_token=x", "", 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			header := http.Header{}
			if tc.cookie != "" {
				header.Set("Cookie", tc.cookie)
			}
			before := len(backend.Seen())
			resp, br, err := proxytest.Upgrade(conn, host, tc.target, header)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("answer %s, want %d", resp.Status, tc.status)
			}
			seen := backend.Seen()[before:]
			if tc.status != http.StatusSwitchingProtocols {
				if len(seen) != 0 {
					t.Fatalf("a refused upgrade reached the sandbox: %+v", seen)
				}
				return
			}
			if err := proxytest.Echo(conn, br, "x"); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 1 || seen[0].RequestURI != "/websockify" || seen[0].Header.Get("Cookie") != "" {
				t.Fatalf("the sandbox got %+v, want /websockify with no token", seen)
			}
		})
	}
}

// TestWithoutToken: the redirect goes to the same path and query, less
// the parameter however it is spelt, and never off the host.
func TestWithoutToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ target, want string }{
		{"/vnc.html?autoconnect=true&e2b_traffic_token=t&resize=scale", "/vnc.html?autoconnect=true&resize=scale"},
		{"/?e2b_traffic_token=t", "/"},
		{"/a%20b/c?e2b%5Ftraffic_token=t&q=%2F&e2b_traffic_token=u", "/a%20b/c?q=%2F"},
		{"//evil.test/x?e2b_traffic_token=t", "/evil.test/x"},
		{"/%2F%2Fevil.test?e2b_traffic_token=t", "/%2F%2Fevil.test"},
		{"/p?e2b_traffic_tokens=t", "/p?e2b_traffic_tokens=t"},
	} {
		u, err := url.ParseRequestURI(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := withoutToken(u); got != tc.want {
			t.Errorf("withoutToken(%q) = %q, want %q", tc.target, got, tc.want)
		}
	}
}
