package apiserver

import (
	"net/http"
	"time"
)

// StatusWriter remembers the status a handler answered with: for
// Options.ObserveRequest, and for the API role, which reads what a node
// answered a relayed create or volume route. An informational answer
// (1xx: 100 Continue, 103 Early Hints) passes on but is not the status:
// the final one follows it. It unwraps for http.ResponseController.
type StatusWriter struct {
	http.ResponseWriter
	status int
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on, for handlers that stream.
func (w *StatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status is the status answered so far; 200 when nothing was written,
// as net/http then sends.
func (w *StatusWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Observed serves r with h and reports the status h answered and how long
// it took. report runs after h, so it may read what routing set on r
// (r.Pattern); a handler that panics is reported by net/http's recovery
// as a 500 before this returns.
func Observed(w http.ResponseWriter, r *http.Request, h http.HandlerFunc, report func(status int, took time.Duration)) {
	// One small allocation; not pooled, since a handler's goroutine
	// could still hold it after the request ends.
	sw := &StatusWriter{ResponseWriter: w}
	start := time.Now()
	defer func() { report(sw.Status(), time.Since(start)) }()
	h(sw, r)
}

// serveObserved serves r through the mux and reports its route pattern
// (set on r by the mux as it routes), status and duration.
func (s *Server) serveObserved(w http.ResponseWriter, r *http.Request) {
	Observed(w, r, s.serve, func(status int, took time.Duration) {
		s.opts.ObserveRequest(r.Pattern, status, took)
	})
}
