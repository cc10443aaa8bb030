package apiserver

import (
	"net/http"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/admission"
)

// getAdmission serves GET /admission: the start queue's levels and
// counts, for the dashboard and for anyone wondering why a create is
// slow. The levels say nothing of other teams but how many wait in all.
func (s *Server) getAdmission(w http.ResponseWriter, r *http.Request) {
	if s.opts.Starts == nil {
		writeError(w, http.StatusNotFound, "this server starts no sandboxes (a cluster's API role): each node has its own queue, in its /metrics")
		return
	}
	writeJSON(w, http.StatusOK, admissionJSON(s.opts.Starts(), teamOf(r)))
}

func admissionJSON(st admission.Stats, team string) rest.Admission {
	return rest.Admission{
		Running: st.Running, Waiting: st.Waiting, WaitingForTeam: st.WaitingByTeam[team], Slots: st.Slots,
		OldestWaitMs: st.OldestWait.Milliseconds(),
		Admitted:     int64(st.Admitted), TimedOut: int64(st.TimedOut), Full: int64(st.Full), Cancelled: int64(st.Cancelled),
		WaitedTotalMs: st.WaitedTotal.Milliseconds(),
	}
}
