package interpreter

import "net/http"

// handleDeleteContext is DELETE /contexts/{id}: shut the kernel down.
func (s *Server) handleDeleteContext(w http.ResponseWriter, r *http.Request) {
	if err := s.remove(r.Context(), r.PathValue("id")); err != nil {
		writeError(r.Context(), w, err)
		return
	}
	writeJSON(w, http.StatusOK, nil)
}
