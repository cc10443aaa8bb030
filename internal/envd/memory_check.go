package envd

import "net/http"

// memoryCheck serves POST /memory/check, warren's nudge when the host sees
// the sandbox's memory cross a threshold: the OOM guard looks now. It
// never blocks; nudges that arrive while one waits are one. A request
// from inside the sandbox gains nothing: the guard only kills when memory
// really is low.
func (s *Server) memoryCheck(w http.ResponseWriter, r *http.Request) {
	select {
	case s.memWake <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}
