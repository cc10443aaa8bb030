// Package proxytest is a sandbox service and a client for the tests of the
// proxies that relay sandbox traffic (internal/proxy, and internal/cluster
// in front of it): the service upgrades to a raw stream as a websocket
// server does (noVNC's websockify), so a test can check that an upgrade is
// relayed both ways and cut when the sandbox goes.
package proxytest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// Greeting is what the service sends first on an upgraded stream, as a
// VNC server speaks first.
const Greeting = "RFB 003.008\n"

// Seen is a request as it reached the service.
type Seen struct {
	Method, RequestURI, Host string
	Header                   http.Header
}

// Backend is the service: an upgrade request gets 101, Greeting and then
// an echo of what it sends; any other request gets 200 "page".
type Backend struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []Seen
}

// NewBackend starts a Backend on loopback, closed at the test's end.
func NewBackend(t testing.TB) *Backend {
	t.Helper()
	b := &Backend{}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

// Port is the service's port on 127.0.0.1.
func (b *Backend) Port() int {
	return int(netip.MustParseAddrPort(b.srv.Listener.Addr().String()).Port())
}

// Seen returns the requests that reached the service so far.
func (b *Backend) Seen() []Seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Seen(nil), b.seen...)
}

func (b *Backend) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.seen = append(b.seen, Seen{Method: r.Method, RequestURI: r.RequestURI, Host: r.Host, Header: r.Header.Clone()})
	b.mu.Unlock()
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		_, _ = io.WriteString(w, "page")
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + Greeting)
	if brw.Flush() != nil {
		return
	}
	_, _ = io.Copy(conn, brw.Reader)
}

// Upgrade sends an upgrade request for target (path and query) to host
// over conn, with header added, and reads the answer's head. The stream,
// after a 101, is read from the returned reader and written to conn.
func Upgrade(conn net.Conn, host, target string, header http.Header) (*http.Response, *bufio.Reader, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+host+target, nil)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := req.Write(conn); err != nil {
		return nil, nil, fmt.Errorf("sending the upgrade: %w", err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer to the upgrade: %w", err)
	}
	return resp, br, nil
}

// Echo checks an upgraded stream both ways: the service's Greeting
// arrives, and msg sent comes back.
func Echo(conn net.Conn, br *bufio.Reader, msg string) error {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(Greeting))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != Greeting {
		return fmt.Errorf("greeting: read %q, %v; want %q", got, err, Greeting)
	}
	if _, err := io.WriteString(conn, msg); err != nil {
		return fmt.Errorf("sending: %w", err)
	}
	got = make([]byte, len(msg))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
		return fmt.Errorf("echo: read %q, %v; want %q", got, err, msg)
	}
	return nil
}

// Ended reports whether the stream ends (EOF or a reset) within wait,
// with nothing more on it.
func Ended(conn net.Conn, br *bufio.Reader, wait time.Duration) error {
	_ = conn.SetDeadline(time.Now().Add(wait))
	n, err := br.Read(make([]byte, 1))
	switch {
	case n > 0:
		return fmt.Errorf("the stream went on: %d byte(s)", n)
	case err == nil:
		return fmt.Errorf("the stream went on")
	case isTimeout(err):
		return fmt.Errorf("the stream is still open after %s", wait)
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
