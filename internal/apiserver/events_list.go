package apiserver

import (
	"fmt"
	"net/http"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// listEvents serves GET /events/sandboxes: the events of the caller's
// team's sandboxes (every team's for the admin key).
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	q, err := eventQuery(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	s.writeEvents(w, r, q)
}

// sandboxEvents serves GET /events/sandboxes/{sandboxID}: one sandbox's
// events, after it was killed too. A sandbox the caller can neither see
// live nor has an event of is not found, whoever owns it.
func (s *Server) sandboxEvents(w http.ResponseWriter, r *http.Request) {
	q, err := eventQuery(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	q.SandboxID = r.PathValue("sandboxID")
	ok, err := s.seesSandbox(r, q)
	if err != nil {
		fail(w, r, err)
		return
	}
	if !ok {
		fail(w, r, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", q.SandboxID)))
		return
	}
	s.writeEvents(w, r, q)
}

// seesSandbox reports whether the sandbox of q is live in the caller's
// team or has an event the caller may see.
func (s *Server) seesSandbox(r *http.Request, q store.EventQuery) (bool, error) {
	s.syncEvents(r)
	if sb, err := s.records().Get(r.Context(), q.SandboxID); err == nil {
		return owns(r, sb.TeamID), nil
	} else if !errdefs.IsNotFound(err) {
		return false, err
	}
	any, err := s.opts.Store.ListEvents(r.Context(), store.EventQuery{TeamID: q.TeamID, SandboxID: q.SandboxID, Limit: 1})
	return len(any) > 0, err
}

func (s *Server) writeEvents(w http.ResponseWriter, r *http.Request, q store.EventQuery) {
	s.syncEvents(r)
	evs, err := s.opts.Store.ListEvents(r.Context(), q)
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.SandboxEvent, 0, len(evs))
	for _, e := range evs {
		j, err := toEventJSON(e)
		if err != nil {
			fail(w, r, err)
			return
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, out)
}

// syncEvents waits for the events recorded so far to be stored, so a
// list right after an operation (a kill, say) shows its event.
func (s *Server) syncEvents(r *http.Request) {
	if s.opts.Events != nil {
		s.opts.Events.Sync(r.Context())
	}
}
