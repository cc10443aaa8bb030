package proxy

import (
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer collects a server's error log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProxyKeepAliveAfterUnreadBody sends requests with bodies to a
// sandbox port that refuses connections, on one kept-alive connection: the
// proxy answers 502 without reading the body. net/http (with full duplex
// on) drains such a body only after the handler returns, and the drain's
// end started a background read that made the next request panic with
// "invalid concurrent Body.Read call"; every request must get its 502.
func TestProxyKeepAliveAfterUnreadBody(t *testing.T) {
	h := New(stubResolver{known: map[string]bool{"abc": true}}, http.NotFoundHandler(), "example.test")
	var errs lockedBuffer
	front := &http.Server{Handler: h, ErrorLog: log.New(&errs, "", 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = front.Serve(ln) }()
	defer front.Close()
	closed := freePort(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for i := range 20 {
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/", strings.NewReader(strings.Repeat("x", 1000)))
		req.Header.Set("E2b-Sandbox-Id", "abc")
		req.Header.Set("E2b-Sandbox-Port", closed)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v\nserver log:\n%.2000s", i, err, errs.String())
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	if strings.Contains(errs.String(), "panic") {
		t.Fatalf("the proxy's server panicked:\n%.2000s", errs.String())
	}
}
