package proxy

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
)

func TestParseHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, host, domain string
		id                 string
		port               int
		ok                 bool
	}{
		{"envd", "49983-abc123.localhost", "localhost", "abc123", 49983, true},
		{"with listen port", "8080-abc123.localhost:3000", "localhost", "abc123", 8080, true},
		{"upper case", "8080-ABC123.Example.COM", "example.com", "abc123", 8080, true},
		{"extra label part", "8080-abc123-x.example.com", "example.com", "abc123", 8080, true},
		{"other domain", "8080-abc123.evil.com", "example.com", "", 0, false},
		{"api host", "localhost:3000", "localhost", "", 0, false},
		{"api subdomain (the volume content API)", "api.example.com", "example.com", "", 0, false},
		{"no port", "abc123.localhost", "localhost", "", 0, false},
		{"port out of range", "70000-abc.localhost", "localhost", "", 0, false},
		{"bad id", "80-ab_c.localhost", "localhost", "", 0, false},
		{"empty domain", "80-abc.", "", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, port, ok := parseHost(tc.host, tc.domain)
			if id != tc.id || port != tc.port || ok != tc.ok {
				t.Fatalf("parseHost(%q, %q) = %q, %d, %v; want %q, %d, %v", tc.host, tc.domain, id, port, ok, tc.id, tc.port, tc.ok)
			}
		})
	}
}

// stubResolver resolves every id to a sandbox at 127.0.0.1 with no token.
type stubResolver struct{ known map[string]bool }

func (s stubResolver) Resolve(_ context.Context, id string) (*Target, error) {
	if !s.known[id] {
		return nil, errdefs.New(errdefs.ErrNotFound, "sandbox not found")
	}
	return &Target{ID: id, IP: netip.MustParseAddr("127.0.0.1")}, nil
}

func (s stubResolver) LiveTokens() map[string]string { return nil }

func TestForwardRefusals(t *testing.T) {
	t.Parallel()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
	h := New(stubResolver{known: map[string]bool{"abc": true}}, api, "example.test")
	closed := freePort(t)
	tests := []struct {
		name, method, path string
		headers            map[string]string
		host               string
		status             int
		contains           string
		errorCode          string // "" for an answer that is not the proxy's
	}{
		{"api", "GET", "/health", nil, "", 299, "", ""},
		{"unknown sandbox", "GET", "/health", map[string]string{"E2b-Sandbox-Id": "zzz", "E2b-Sandbox-Port": "49983"}, "", 502, "The sandbox was not found", "sandbox_not_found"},
		{"bad port header", "GET", "/health", map[string]string{"E2b-Sandbox-Id": "abc", "E2b-Sandbox-Port": "x"}, "", 400, "E2b-Sandbox-Port", "invalid_argument"},
		{"init refused", "POST", "/init", map[string]string{"E2b-Sandbox-Id": "abc", "E2b-Sandbox-Port": "49983"}, "", 403, "reserved", "permission_denied"},
		{"closed port", "GET", "/", map[string]string{"E2b-Sandbox-Id": "abc", "E2b-Sandbox-Port": closed}, "", 502, "port is not open", "sandbox_port_not_open"},
		{"host routing unknown", "GET", "/", nil, "8080-zzz.example.test", 502, "not found", "sandbox_not_found"},
		{"signed url matching nothing", "GET", "/files?path=a&signature=v1_x", nil, "", 401, "invalid signature", "unauthenticated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.contains) {
				t.Fatalf("got %d %s; want %d containing %q", rec.Code, rec.Body.String(), tc.status, tc.contains)
			}
			if tc.errorCode == "" {
				return
			}
			var b httperr.Body
			if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || b.Code != tc.status || b.ErrorCode != tc.errorCode {
				t.Fatalf("body %s: want code %d, error_code %q", rec.Body, tc.status, tc.errorCode)
			}
		})
	}
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port
}
