package apiserver

import "net/http"

// serveMetrics serves GET /metrics in Prometheus' text format to the admin
// key only: the figures are the whole server's, not one team's.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if !isAdmin(r) {
		writeError(w, http.StatusForbidden, "only the admin key (WARREN_API_KEY) reads /metrics")
		return
	}
	if s.opts.Metrics == nil {
		writeError(w, http.StatusNotImplemented, "this server exports no metrics")
		return
	}
	s.opts.Metrics.ServeHTTP(w, r)
}
