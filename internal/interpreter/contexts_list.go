package interpreter

import "net/http"

// handleListContexts is GET /contexts: every context, without the
// "default" alias (the default context is listed under its id).
func (s *Server) handleListContexts(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.list())
}
