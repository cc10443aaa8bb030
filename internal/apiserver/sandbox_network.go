package apiserver

import (
	"encoding/json"
	"net/http"

	"github.com/warren-sandbox/warren/api/rest"
)

// updateNetwork serves PUT /sandboxes/{id}/network: the egress settings
// (allowOut, denyOut, allow_internet_access) are replaced as a whole, an
// omitted field is cleared (no internet switch means internet allowed).
// The public-traffic settings of the create stay.
func (s *Server) updateNetwork(w http.ResponseWriter, r *http.Request) {
	raw, err := readBody(r, maxBody)
	if err != nil {
		fail(w, r, err)
		return
	}
	var body struct {
		AllowInternetAccess *bool `json:"allow_internet_access"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			fail(w, r, invalid("decoding body: "+err.Error()))
			return
		}
	}
	var n rest.SandboxNetwork
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &n); err != nil {
			fail(w, r, invalid("decoding body: "+err.Error()))
			return
		}
	}
	upd, err := parseNetwork(&n, body.AllowInternetAccess == nil || *body.AllowInternetAccess)
	if err != nil {
		fail(w, r, err)
		return
	}
	if err := s.opts.Manager.UpdateNetwork(r.Context(), r.PathValue("id"), upd.Egress); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
