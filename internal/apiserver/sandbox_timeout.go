package apiserver

import (
	"fmt"
	"net/http"
	"time"
)

// setTimeout serves POST /sandboxes/{id}/timeout: the sandbox ends
// `timeout` seconds from now, shorter or longer than before.
func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Timeout *int64 `json:"timeout"`
	}
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	if body.Timeout == nil {
		fail(w, r, invalid("timeout is required"))
		return
	}
	d, err := s.timeout(body.Timeout, 0)
	if err == nil {
		err = s.opts.Manager.SetTimeout(r.Context(), r.PathValue("id"), d)
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxRefresh is the longest extension POST .../refreshes accepts, as E2B.
const maxRefresh = 3600

// refresh serves POST /sandboxes/{id}/refreshes: keep the sandbox alive for
// at least `duration` more seconds.
func (s *Server) refresh(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Duration *int64 `json:"duration"`
	}
	if err := decode(r, &body, true); err != nil {
		fail(w, r, err)
		return
	}
	secs := int64(60)
	if body.Duration != nil {
		secs = *body.Duration
	}
	if secs < 0 || secs > maxRefresh {
		fail(w, r, invalid(fmt.Sprintf("duration must be between 0 and %d seconds", maxRefresh)))
		return
	}
	if err := s.opts.Manager.Refresh(r.Context(), r.PathValue("id"), time.Duration(secs)*time.Second); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
