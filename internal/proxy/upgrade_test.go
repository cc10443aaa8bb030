package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/proxy/proxytest"
	"github.com/warren-sandbox/warren/internal/tlsutil"
)

// trackingResolver resolves every id to a sandbox at 127.0.0.1 with
// token, and tracks the proxy's connections to it as lifecycle does, so
// cut can close them as a kill or a pause does.
type trackingResolver struct {
	token string
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func (r *trackingResolver) Resolve(_ context.Context, id string) (*Target, error) {
	return &Target{ID: id, IP: netip.MustParseAddr("127.0.0.1"), TrafficAccessToken: r.token, Track: r.track}, nil
}

func (*trackingResolver) LiveTokens() map[string]string { return nil }

func (r *trackingResolver) track(c net.Conn) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = map[net.Conn]struct{}{}
	}
	r.conns[c] = struct{}{}
	return func() {
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
	}
}

// cut closes the tracked connections and says how many there were.
func (r *trackingResolver) cut() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.conns)
	for c := range r.conns {
		_ = c.Close()
	}
	clear(r.conns)
	return n
}

const testDomain = "example.test"

// serveTLS serves h as warren does with --tls: a TLS listener offering h2
// and http/1.1 (tlsutil.Config). It returns the address and the CA.
func serveTLS(t *testing.T, h http.Handler) (string, *x509.CertPool) {
	t.Helper()
	files, err := tlsutil.Ensure(t.TempDir(), testDomain)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tlsutil.Config(files)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(files.CACert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return serve(t, h, func(ln net.Listener) net.Listener { return tls.NewListener(ln, cfg) }), pool
}

// serve serves h on loopback, the listener wrapped by wrap.
func serve(t *testing.T, h http.Handler, wrap func(net.Listener) net.Listener) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(wrap(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestUpgradeRelayed: a websocket upgrade routed by Host reaches the
// sandbox's port and is relayed both ways, over plain HTTP/1.1 and over
// TLS whatever the client offers by ALPN short of h2 (browsers open
// websockets on HTTP/1.1 connections); a kill or pause (the Track
// connections closed) ends it.
func TestUpgradeRelayed(t *testing.T) {
	t.Parallel()
	backend := proxytest.NewBackend(t)
	res := &trackingResolver{}
	h := New(res, http.NotFoundHandler(), testDomain)
	plainAddr := serve(t, h, func(ln net.Listener) net.Listener { return ln })
	tlsAddr, pool := serveTLS(t, h)
	host := strconv.Itoa(backend.Port()) + "-abc." + testDomain
	tests := []struct {
		name  string
		alpn  []string // nil with tls: no ALPN at all
		tls   bool
		proto string // the protocol ALPN must settle on
	}{
		{"plain http/1.1", nil, false, ""},
		{"tls, http/1.1 by ALPN", []string{"http/1.1"}, true, "http/1.1"},
		{"tls, no ALPN", nil, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var conn net.Conn
			var err error
			if tc.tls {
				conn, err = tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: pool, ServerName: host, NextProtos: tc.alpn})
			} else {
				conn, err = net.Dial("tcp", plainAddr)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if c, ok := conn.(*tls.Conn); ok && c.ConnectionState().NegotiatedProtocol != tc.proto {
				t.Fatalf("ALPN settled on %q, want %q", c.ConnectionState().NegotiatedProtocol, tc.proto)
			}
			resp, br, err := proxytest.Upgrade(conn, host, "/websockify", nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusSwitchingProtocols {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("upgrade answered %s %s", resp.Status, body)
			}
			if err := proxytest.Echo(conn, br, "hello from "+tc.name); err != nil {
				t.Fatal(err)
			}
			if n := res.cut(); n != 1 {
				t.Fatalf("%d tracked connection(s) to the sandbox, want the stream's 1", n)
			}
			if err := proxytest.Ended(conn, br, 10*time.Second); err != nil {
				t.Fatalf("after the sandbox's connections were cut: %v", err)
			}
		})
	}
}

// TestH2WithoutExtendedConnect: the TLS listener offers h2, which a
// browser takes for the page, but must not announce RFC 8441's extended
// CONNECT (SETTINGS_ENABLE_CONNECT_PROTOCOL): a browser would then open
// its websockets over h2, which the proxy does not relay, instead of over
// HTTP/1.1, which it does (see TestUpgradeRelayed).
func TestH2WithoutExtendedConnect(t *testing.T) {
	t.Parallel()
	backend := proxytest.NewBackend(t)
	addr, pool := serveTLS(t, New(&trackingResolver{}, http.NotFoundHandler(), testDomain))
	host := strconv.Itoa(backend.Port()) + "-abc." + testDomain
	client := &http.Client{Transport: &http.Transport{
		ForceAttemptHTTP2: true,
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://" + host + "/vnc.html")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || string(body) != "page" {
		t.Fatalf("page over h2: %s %s %q", resp.Proto, resp.Status, body)
	}
	settings := h2Settings(t, addr, pool, host)
	const enableConnectProtocol = 0x8
	if v, ok := settings[enableConnectProtocol]; ok && v != 0 {
		t.Fatalf("the server announces extended CONNECT (settings %v): browsers would send websockets over h2", settings)
	}
}

// h2Settings opens an h2 connection and returns the server's first
// SETTINGS frame, by identifier.
func h2Settings(t *testing.T, addr string, pool *x509.CertPool, host string) map[uint16]uint32 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: host, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN settled on %q, want h2 offered", p)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	// The client preface, then an empty SETTINGS frame.
	if _, err := io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	head := make([]byte, 9)
	if _, err := io.ReadFull(br, head); err != nil {
		t.Fatal(err)
	}
	length := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
	if head[3] != 0x4 || length%6 != 0 {
		t.Fatalf("the server's first frame is type %d, length %d; want SETTINGS", head[3], length)
	}
	payload := make([]byte, length)
	if _, err := io.ReadFull(br, payload); err != nil {
		t.Fatal(err)
	}
	out := map[uint16]uint32{}
	for i := 0; i < length; i += 6 {
		out[binary.BigEndian.Uint16(payload[i:])] = binary.BigEndian.Uint32(payload[i+2:])
	}
	return out
}
