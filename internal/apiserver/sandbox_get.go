package apiserver

import "net/http"

// getSandbox serves GET /sandboxes/{id}.
func (s *Server) getSandbox(w http.ResponseWriter, r *http.Request) {
	sb, err := s.opts.Manager.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.detailResponse(sb, true))
}
