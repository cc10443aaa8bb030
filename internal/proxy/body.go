package proxy

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// errBodyDone is what a read of the client's body gets after the proxy's
// handler has returned.
var errBodyDone = errors.New("proxy: the request is over")

// guardedBody keeps the transport's request writer off the client's body
// once the handler returns. The transport may still be sending the body
// when the sandbox's answer ends the proxying; a read that reaches the
// body's end after that starts net/http's background read of the next
// request behind the server's back, and the server then panics with
// "invalid concurrent Body.Read call". finish stops further reads, waits
// for one in flight (cutting it short with interrupt) and drains the rest.
type guardedBody struct {
	rc        io.ReadCloser
	reading   sync.Mutex // held for the length of a read
	done      atomic.Bool
	interrupt func(deadline time.Time) error
}

func (g *guardedBody) Read(p []byte) (int, error) {
	g.reading.Lock()
	defer g.reading.Unlock()
	if g.done.Load() {
		return 0, errBodyDone
	}
	return g.rc.Read(p)
}

func (g *guardedBody) Close() error { return g.rc.Close() }

// Bounds of the drain in finish.
const (
	drainBytes = 64 << 20
	drainWait  = 5 * time.Second
)

// finish returns once no read is in flight and none can start, with the
// rest of the body read. With full duplex on, net/http drains an unread
// body only after the handler returns, and that drain reaching the end
// starts the background read behind the server's back too; so the proxy
// drains it first (a client sending more than drainBytes, or too slowly,
// has its connection closed instead).
func (g *guardedBody) finish() {
	g.done.Store(true)
	if g.reading.TryLock() {
		defer g.reading.Unlock()
		_ = g.interrupt(time.Now().Add(drainWait))
		_, _ = io.CopyN(io.Discard, g.rc, drainBytes)
		_ = g.interrupt(time.Time{})
		return
	}
	// A read waits for the client: a deadline in the past ends it (the
	// connection is then not reused), and the server sets its own
	// deadlines before it reads again.
	_ = g.interrupt(time.Unix(1, 0))
	g.reading.Lock()
	g.reading.Unlock()
	_ = g.interrupt(time.Time{})
}

// GuardBody readies r for relaying to a backend over w: full duplex on
// (a streamed body may still be sending when the answer starts) and the
// body guarded as guardedBody says. Call finish once the relaying is done.
// The cluster's API role relays this way too.
func GuardBody(w http.ResponseWriter, r *http.Request) (out *http.Request, finish func()) {
	rc := http.NewResponseController(w)
	_ = rc.EnableFullDuplex()
	if r.Body == nil || r.Body == http.NoBody {
		return r, func() {}
	}
	g := &guardedBody{rc: r.Body, interrupt: rc.SetReadDeadline}
	out = r.WithContext(r.Context())
	out.Body = g
	return out, g.finish
}
