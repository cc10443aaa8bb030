package apiserver

import "net/http"

// killSandbox serves DELETE /sandboxes/{id}: 204, or 404 when unknown.
func (s *Server) killSandbox(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Manager.Kill(r.Context(), r.PathValue("id")); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
