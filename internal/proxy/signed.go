package proxy

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
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
		got := []byte(Sign(q.Get("path"), op, q.Get("username"), token, q.Get("signature_expiration")))
		if subtle.ConstantTimeCompare(got, want) == 1 {
			h.forward(w, r, id, EnvdPort)
			return
		}
	}
	writeJSON(w, http.StatusUnauthorized, map[string]any{
		"code": 401, "message": "invalid signature: it matches no running sandbox",
	})
}

// Sign computes an E2B file URL signature: "v1_" + unpadded base64 of
// sha256("path:operation:username:token[:expiration]").
func Sign(path, operation, username, token, expiration string) string {
	raw := path + ":" + operation + ":" + username + ":" + token
	if expiration != "" {
		raw += ":" + expiration
	}
	sum := sha256.Sum256([]byte(raw))
	return "v1_" + base64.RawStdEncoding.EncodeToString(sum[:])
}
