// Package filesig computes E2B's file URL signatures, shared by envd (which
// checks them) and the proxy (which routes header-less signed URLs by
// finding the sandbox whose token reproduces one).
package filesig

import (
	"crypto/sha256"
	"encoding/base64"
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
