package envd

import "net/http"

// health answers 204: the SDK treats any 2xx as "sandbox running".
func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}
