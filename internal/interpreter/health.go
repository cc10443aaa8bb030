package interpreter

import "net/http"

// handleHealth is GET /health, used by the template's ready check.
func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, "OK")
}
