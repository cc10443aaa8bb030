package apiserver

import (
	"net/http"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/httperr"
)

// fork serves POST /sandboxes/{id}/fork: 201 with one result per fork, or
// an error when no fork was attempted.
func (s *Server) fork(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Timeout *int64 `json:"timeout"`
		Count   *int   `json:"count"`
	}
	if err := decode(r, &body, true); err != nil {
		fail(w, r, err)
		return
	}
	d, err := s.timeout(body.Timeout, defaultTimeout)
	if err != nil {
		fail(w, r, err)
		return
	}
	count := 1
	if body.Count != nil {
		count = *body.Count
	}
	results, err := s.opts.Manager.Fork(r.Context(), r.PathValue("id"), count, d)
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.ForkResult, len(results))
	for i, res := range results {
		if res.Err != nil {
			err := startFailed(res.Err)
			out[i].Error = &rest.Error{Code: statusOf(err), ErrorCode: httperr.CodeOf(err), Message: err.Error()}
			continue
		}
		sb := s.sandboxResponse(res.Sandbox)
		out[i].Sandbox = &sb
	}
	writeJSON(w, http.StatusCreated, out)
}
