package interpreter

import "net/http"

// handleListContexts is GET /contexts: every context, without the
// "default" alias (the default context is listed under its id).
func (s *Server) handleListContexts(w http.ResponseWriter, r *http.Request) {
	list, err := s.list(r.Context())
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}
