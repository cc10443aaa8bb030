package egressproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/netguard"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		host     string
		patterns []string
		want     bool
	}{
		{"example.com", []string{"example.com"}, true},
		{"EXAMPLE.com.", []string{"example.com"}, true},
		{"api.example.com", []string{"example.com"}, false},
		{"api.example.com", []string{"*.example.com"}, true},
		{"a.b.example.com", []string{"*.example.com"}, true},
		{"example.com", []string{"*.example.com"}, false},
		{"badexample.com", []string{"*.example.com"}, false},
		{"example.com.evil.net", []string{"example.com"}, false},
		{"", []string{"example.com"}, false},
		{"x.org", nil, false},
	}
	for _, tc := range tests {
		if got := Match(tc.host, tc.patterns); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.host, tc.patterns, got, tc.want)
		}
	}
}

// TestProxy runs the proxy on loopback against servers of the test's own:
// allowed names are connected to (at the address the resolver gives, not
// the one dialled), others refused; HTTP gets a 403, TLS a closed conn.
func TestProxy(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend saw host %s", r.Host)
	}))
	defer backend.Close()
	tlsBackend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "tls backend")
	}))
	defer tlsBackend.Close()
	port := func(s *httptest.Server) int { return s.Listener.Addr().(*net.TCPAddr).Port }

	var target int
	p := &Proxy{
		Policy: func(src netip.Addr) ([]string, bool) { return []string{"allowed.test", "*.wild.test"}, true },
		// Every name resolves to loopback, which the proxy refuses unless
		// the operator allows it, as this test does.
		Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			return nil, errors.New("no DNS in this test")
		}},
		origPort: func(net.Conn) (int, error) { return target, nil },
	}
	p.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	p.Guard = &netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	defer p.Close()
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return net.Dial("tcp", ln.Addr().String())
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	get := func(url string) (int, string, error) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	target = port(backend)
	for _, tc := range []struct {
		url, want string
		code      int
	}{
		{"http://allowed.test/", "backend saw host allowed.test", 200},
		{"http://api.wild.test/", "backend saw host api.wild.test", 200},
		{"http://denied.test/", "refused", 403},
		{"http://wild.test/", "refused", 403},
	} {
		code, body, err := get(tc.url)
		if err != nil || code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s = %d %q %v; want %d with %q", tc.url, code, body, err, tc.code, tc.want)
		}
	}
	target = port(tlsBackend)
	if code, body, err := get("https://allowed.test/"); err != nil || code != 200 || body != "tls backend" {
		t.Errorf("https allowed: %d %q %v", code, body, err)
	}
	if _, _, err := get("https://denied.test/"); err == nil {
		t.Error("https to a denied name connected")
	}
}

// TestUnreachableAddresses: an allowed name resolving to an internal
// address is not dialled, unless the operator allowed that range.
func TestUnreachableAddresses(t *testing.T) {
	host := netip.MustParseAddr("203.0.113.9")
	deny := []netip.Prefix{netip.MustParsePrefix("10.99.0.0/16")}
	for _, tc := range []struct {
		addr  string
		allow string
		want  bool
	}{
		{"127.0.0.1", "", false},
		{"169.254.169.254", "", false},
		{"10.99.0.1", "", false},
		{"10.1.2.3", "", false},
		{"172.20.0.1", "", false},
		{"192.168.1.1", "", false},
		{"100.64.0.1", "", false},
		{"0.0.0.0", "", false},
		{"224.0.0.1", "", false},
		{"203.0.113.9", "", false}, // the host's own
		{"192.0.2.10", "", true},
		{"10.1.2.3", "10.1.0.0/16", true},
		{"10.99.0.1", "10.1.0.0/16", false},
	} {
		g := &netguard.Guard{Deny: deny, HostAddrs: func() []netip.Addr { return []netip.Addr{host} }}
		if tc.allow != "" {
			g.Allow = []netip.Prefix{netip.MustParsePrefix(tc.allow)}
		}
		p := &Proxy{Guard: g}
		if got := p.reachable(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("reachable(%s) with allow %q = %v, want %v", tc.addr, tc.allow, got, tc.want)
		}
	}
}
