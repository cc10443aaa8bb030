// Package filesig computes E2B's file URL signatures, shared by envd (which
// checks them) and the proxy (which routes header-less signed URLs by
// finding the sandbox whose token reproduces one).
package filesig

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
)

// Sign returns "v1_" + unpadded standard base64 of
// sha256("path:operation:username:token[:expiration]"). path is the path
// exactly as the client passed it; operation is "read" or "write".
func Sign(path, operation, username, token, expiration string) string {
	raw := path + ":" + operation + ":" + username + ":" + token
	if expiration != "" {
		raw += ":" + expiration
	}
	sum := sha256.Sum256([]byte(raw))
	return "v1_" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// SignedBy reports whether the signed /files request with query q and
// method (GET reads, POST writes) was signed with token.
func SignedBy(q url.Values, method, token string) bool {
	op := "read"
	if method == http.MethodPost {
		op = "write"
	}
	got := Sign(q.Get("path"), op, q.Get("username"), token, q.Get("signature_expiration"))
	return subtle.ConstantTimeCompare([]byte(got), []byte(q.Get("signature"))) == 1
}
