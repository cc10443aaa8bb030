package apiserver

import (
	"net/http"
	"time"
)

// statusWriter remembers the status a handler answered with, for
// Options.ObserveRequest. It unwraps for http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on, for handlers that stream.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveObserved serves r through the mux and reports its route pattern
// (set on r by the mux as it routes), status and duration. A handler that
// panics is reported by ServeHTTP's recovery as a 500 before this returns.
func (s *Server) serveObserved(w http.ResponseWriter, r *http.Request) {
	// One small allocation; not pooled, since a handler's goroutine
	// could still hold it after the request ends.
	sw := &statusWriter{ResponseWriter: w}
	start := time.Now()
	defer func() {
		status := sw.status
		if status == 0 {
			status = http.StatusOK // nothing written: net/http sends 200
		}
		s.opts.ObserveRequest(r.Pattern, status, time.Since(start))
	}()
	s.serve(sw, r)
}
