package wire

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
)

// SignFileURL is E2B's file URL signature, the one implementation shared by
// envd (which checks it), the proxy (which routes header-less signed URLs
// by finding the sandbox whose token reproduces one) and the Go SDK (which
// signs download and upload URLs). It is "v1_" + unpadded standard base64 of
// sha256("path:operation:username:token[:expiration]"). path is the path
// exactly as the client passed it; operation is "read" or "write".
func SignFileURL(path, operation, username, token, expiration string) string {
	raw := path + ":" + operation + ":" + username + ":" + token
	if expiration != "" {
		raw += ":" + expiration
	}
	sum := sha256.Sum256([]byte(raw))
	return "v1_" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// FileURLSignedBy reports whether the signed /files request with query q and
// method (GET reads, POST writes) was signed with token.
func FileURLSignedBy(q url.Values, method, token string) bool {
	op := "read"
	if method == http.MethodPost {
		op = "write"
	}
	got := SignFileURL(q.Get("path"), op, q.Get("username"), token, q.Get("signature_expiration"))
	return subtle.ConstantTimeCompare([]byte(got), []byte(q.Get("signature"))) == 1
}
