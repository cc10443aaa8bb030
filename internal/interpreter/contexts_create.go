package interpreter

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

type createContextRequest struct {
	Language *string `json:"language"`
	Cwd      *string `json:"cwd"`
}

// handleCreateContext is POST /contexts: a new context with its own kernel.
func (s *Server) handleCreateContext(w http.ResponseWriter, r *http.Request) {
	var req createContextRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil && err != io.EOF {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("invalid request body: %v", err))
		return
	}
	lang, err := s.resolveLanguage(deref(req.Language))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	cwd := deref(req.Cwd)
	if cwd == "" {
		cwd = s.opts.Cwd
	}
	c, err := s.create(r.Context(), lang, cwd)
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	writeJSON(w, http.StatusOK, c.info())
}
