package interpreter

import (
	"net/http"

	"github.com/warren-sandbox/warren/internal/log"
)

// handleRestartContext is POST /contexts/{id}/restart: a fresh kernel with
// the context's id, language and cwd; all state is lost.
func (s *Server) handleRestartContext(w http.ResponseWriter, r *http.Request) {
	c, err := s.lookup(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	ctx := log.With(r.Context(), "context", c.ID, "language", c.Language)
	if err := c.restart(ctx); err != nil {
		writeError(ctx, w, err)
		return
	}
	writeJSON(w, http.StatusOK, nil)
}
