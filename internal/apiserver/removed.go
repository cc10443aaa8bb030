package apiserver

import (
	"fmt"
	"net/http"
)

// removedEndpoints are E2B's v1 template-build API (Dockerfile builds by
// the old CLI, and the v2 request the SDKs before the v3 API sent). E2B
// answers them 410 Gone; no SDK still supported calls them (e2b 2.50 and
// 2.51 request builds with POST /v3/templates).
var removedEndpoints = []string{
	"POST /templates",
	"POST /templates/{templateID}",
	"POST /templates/{templateID}/builds/{buildID}",
	"POST /v2/templates",
}

// gone answers a removed endpoint, unauthenticated: whoever calls it needs
// the same advice.
func (s *Server) gone(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusGone, fmt.Sprintf(
		"%s %s was removed: upgrade the E2B SDK or CLI, which request builds with POST /v3/templates "+
			"and start them with POST /v2/templates/{templateID}/builds/{buildID}", r.Method, r.URL.Path))
}
