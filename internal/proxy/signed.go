package proxy

import (
	"net/http"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/httperr"
)

// serveSignedFile routes a signed /files URL that carries no sandbox id (the
// SDK builds such URLs from E2B_SANDBOX_URL) to the one sandbox whose envd
// token reproduces the signature. envd then checks the signature itself.
func (h *Handler) serveSignedFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for id, token := range h.resolver.LiveTokens() {
		if wire.FileURLSignedBy(q, r.Method, token) {
			h.forward(w, r, id, wire.EnvdPort)
			return
		}
	}
	httperr.Error(w, http.StatusUnauthorized, "invalid signature: it matches no running sandbox")
}
