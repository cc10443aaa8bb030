package proxy

import (
	"bytes"
	"fmt"
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

// TestProxyNoLateBodyReads has the sandbox answer before it reads a
// request's body, over and over on kept-alive connections. The proxy must
// never read the client's body after its handler returned: net/http panics
// ("invalid concurrent Body.Read call") when it does.
func TestProxyNoLateBodyReads(t *testing.T) {
	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "early")
	})}
	bln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = backend.Serve(bln) }()
	defer backend.Close()
	_, port, _ := net.SplitHostPort(bln.Addr().String())

	h := New(stubResolver{known: map[string]bool{"abc": true}}, http.NotFoundHandler(), "example.test")
	var errs lockedBuffer
	front := &http.Server{Handler: h, ErrorLog: log.New(&errs, "", 0)}
	fln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = front.Serve(fln) }()
	defer front.Close()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	body := strings.Repeat("x", 64<<10)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				pr, pw := io.Pipe()
				go func() {
					for range 4 {
						if _, err := io.WriteString(pw, body[:len(body)/4]); err != nil {
							return
						}
					}
					_ = pw.Close()
				}()
				req, _ := http.NewRequest("POST", "http://"+fln.Addr().String()+"/", pr)
				req.ContentLength = int64(len(body))
				req.Header.Set("E2b-Sandbox-Id", "abc")
				req.Header.Set("E2b-Sandbox-Port", port)
				resp, err := client.Do(req)
				if err != nil {
					continue // a closed kept-alive connection is fine; a panic is not
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				_ = fmt.Sprint(w, i)
			}
		}()
	}
	wg.Wait()
	if strings.Contains(errs.String(), "panic") {
		t.Fatalf("the proxy's server panicked:\n%.2000s", errs.String())
	}
}
