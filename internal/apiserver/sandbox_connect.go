package apiserver

import (
	"net/http"

	"github.com/warren-sandbox/warren/internal/sandbox"
)

// connectV1 serves POST /sandboxes/{id}/connect, whose body and timeout are
// required.
func (s *Server) connectV1(w http.ResponseWriter, r *http.Request) { s.connect(w, r, false) }

// connectV2 serves POST /v2/sandboxes/{id}/connect, whose body is optional.
// Without a timeout a paused sandbox resumes with the lifetime it had left
// (sandbox.NoTimeout); with one, with at least that.
func (s *Server) connectV2(w http.ResponseWriter, r *http.Request) { s.connect(w, r, true) }

func (s *Server) connect(w http.ResponseWriter, r *http.Request, optional bool) {
	var body struct {
		Timeout *int64 `json:"timeout"`
		Memory  *bool  `json:"memory"`
	}
	if err := decode(r, &body, optional); err != nil {
		fail(w, r, err)
		return
	}
	if !optional && body.Timeout == nil {
		fail(w, r, invalid("timeout is required"))
		return
	}
	d, err := s.timeout(body.Timeout, sandbox.NoTimeout)
	if err != nil {
		fail(w, r, err)
		return
	}
	sb, resumed, err := s.opts.Manager.Connect(r.Context(), r.PathValue("id"), d, body.Memory == nil || *body.Memory)
	if err != nil {
		fail(w, r, startFailed(err))
		return
	}
	status := http.StatusOK
	if resumed {
		status = http.StatusCreated
	}
	writeJSON(w, status, s.sandboxResponse(sb))
}
