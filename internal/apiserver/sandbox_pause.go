package apiserver

import (
	"fmt"
	"net/http"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// pause serves POST /sandboxes/{id}/pause: 204, or 409 when already paused.
func (s *Server) pause(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Memory *bool `json:"memory"`
	}
	if err := decode(r, &body, true); err != nil {
		fail(w, r, err)
		return
	}
	if err := s.opts.Manager.Pause(r.Context(), r.PathValue("id"), body.Memory == nil || *body.Memory); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// resume serves the deprecated POST /sandboxes/{id}/resume: 201, or 409 when
// the sandbox is already running.
func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Timeout *int64 `json:"timeout"`
		Memory  *bool  `json:"memory"`
	}
	if err := decode(r, &body, true); err != nil {
		fail(w, r, err)
		return
	}
	d, err := s.timeout(body.Timeout, sandbox.NoTimeout)
	if err != nil {
		fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	cur, err := s.opts.Manager.Get(r.Context(), id)
	if err != nil {
		fail(w, r, err)
		return
	}
	if cur.State != store.SandboxPaused {
		writeError(w, http.StatusConflict, fmt.Sprintf("sandbox %q is already running", id))
		return
	}
	sb, _, err := s.opts.Manager.Connect(r.Context(), id, d, body.Memory == nil || *body.Memory)
	if err != nil {
		fail(w, r, startFailed(err))
		return
	}
	writeJSON(w, http.StatusCreated, s.sandboxResponse(sb))
}
