package proxy

import (
	"crypto/subtle"
	"github.com/warren-sandbox/warren/internal/wire"
	"net/http"

	"github.com/warren-sandbox/warren/internal/filesig"
)

// serveSignedFile routes a signed /files URL that carries no sandbox id (the
// SDK builds such URLs from E2B_SANDBOX_URL) to the one sandbox whose envd
// token reproduces the signature. envd then checks the signature itself.
func (h *Handler) serveSignedFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	op := "read"
	if r.Method == http.MethodPost {
		op = "write"
	}
	want := []byte(q.Get("signature"))
	for id, token := range h.resolver.LiveTokens() {
		got := []byte(filesig.Sign(q.Get("path"), op, q.Get("username"), token, q.Get("signature_expiration")))
		if subtle.ConstantTimeCompare(got, want) == 1 {
			h.forward(w, r, id, wire.EnvdPort)
			return
		}
	}
	writeJSON(w, http.StatusUnauthorized, map[string]any{
		"code": 401, "message": "invalid signature: it matches no running sandbox",
	})
}
