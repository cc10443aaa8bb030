package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
)

// httpsResolver resolves to a sandbox at 127.0.0.1 whose httpsPorts are set.
type httpsResolver struct{ ports []int }

func (r httpsResolver) Resolve(_ context.Context, id string) (*Target, error) {
	return &Target{ID: id, IP: netip.MustParseAddr("127.0.0.1"), HTTPSPorts: r.ports}, nil
}

func (httpsResolver) LiveTokens() map[string]string { return nil }

// TestHTTPSPorts: a port listed in network.httpsPorts is reached over TLS,
// self-signed certificate and all; others stay plain HTTP.
func TestHTTPSPorts(t *testing.T) {
	t.Parallel()
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "tls="+strconv.FormatBool(r.TLS != nil))
	})
	tlsSrv := httptest.NewTLSServer(hello)
	defer tlsSrv.Close()
	plain := httptest.NewServer(hello)
	defer plain.Close()
	tlsPort := netip.MustParseAddrPort(tlsSrv.Listener.Addr().String()).Port()
	plainPort := netip.MustParseAddrPort(plain.Listener.Addr().String()).Port()
	h := New(httpsResolver{ports: []int{int(tlsPort)}}, http.NotFoundHandler(), "example.test")
	for _, tc := range []struct {
		name   string
		port   uint16
		status int
		body   string
	}{
		{"listed port over TLS", tlsPort, 200, "tls=true"},
		{"other port plain", plainPort, 200, "tls=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/", nil)
			req.Host = strconv.Itoa(int(tc.port)) + "-abc.example.test"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status || rec.Body.String() != tc.body {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.status, tc.body)
			}
		})
	}
}
