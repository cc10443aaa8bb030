package envd

import "net/http"

// envs returns the sandbox's global env vars (the create-time envVars); the
// code interpreter inside the sandbox reads them.
func (s *Server) envs(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.st.EnvVars())
}
