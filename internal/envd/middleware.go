package envd

import (
	"net/http"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
)

// unauthorizedMessage is E2B envd's exact 401 text; SDKs show it verbatim.
const unauthorizedMessage = "unauthorized access, please provide a valid access token or method signing if supported"

// tokenExempt lists the paths that skip the X-Access-Token check: /health
// and /init always, /files because it checks the token or a URL signature
// itself.
var tokenExempt = map[string]bool{"/health": true, "/init": true, "/files": true}

// withToken requires X-Access-Token on every other request once a token is set.
func (s *Server) withToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tokenExempt[r.URL.Path] && !s.st.CheckToken(r.Header.Get("X-Access-Token")) {
			writeError(w, http.StatusUnauthorized, unauthorizedMessage)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withoutZeroTimeout drops "Connect-Timeout-Ms: 0". The protocol says 0
// means no deadline, but connect-go would read it as one already passed.
func withoutZeroTimeout(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Connect-Timeout-Ms"); v != "" && strings.Trim(v, "0") == "" {
			r.Header.Del("Connect-Timeout-Ms")
		}
		next.ServeHTTP(w, r)
	})
}

// exposedHeaders are readable by browser clients: the Connect and gRPC
// status headers plus the ones E2B's envd exposes.
var exposedHeaders = strings.Join([]string{
	"Connect-Protocol-Version", "Connect-Content-Encoding", "Connect-Accept-Encoding",
	"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin", "Content-Encoding",
	"Content-Disposition", "Location", "Cache-Control", "X-Content-Type-Options",
}, ", ")

// withCORS allows every origin, method and header, and answers preflights
// itself (they carry no token, so they must not reach withToken).
func withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", exposedHeaders)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS")
			// "*" does not cover Authorization, so echo what was asked for.
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			} else {
				h.Set("Access-Control-Allow-Headers", "*")
			}
			h.Set("Access-Control-Max-Age", "7200")
			h.Add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withLogging puts a request-scoped logger in the context and logs each
// request once it is done.
func (s *Server) withLogging(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := log.WithLogger(r.Context(), s.logger.With("method", r.Method, "path", r.URL.Path))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(ctx))
		log.G(ctx).Debug("request", "status", rec.status, "duration", time.Since(start))
	})
}

// statusRecorder notes the response status. It keeps Flush and Unwrap
// reachable, which Connect streaming needs.
type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
