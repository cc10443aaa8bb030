package warren

import (
	"crypto/sha256"
	"encoding/base64"
)

// signFileURL is E2B's file URL signature, as its JS and Python SDKs
// compute it and envd checks it: "v1_" + unpadded standard base64 of
// sha256("path:operation:username:token[:expiration]"). path is the path
// exactly as the caller gave it (envd signs what it was sent, unresolved);
// operation is "read" or "write"; expiration is unix seconds, or "" for a
// URL that never expires.
//
// The SDK keeps its own copy rather than importing the server's
// (internal/filesig) so that it depends on nothing internal;
// TestSignFileURLMatchesServer holds the two to the same answers.
func signFileURL(path, operation, username, token, expiration string) string {
	raw := path + ":" + operation + ":" + username + ":" + token
	if expiration != "" {
		raw += ":" + expiration
	}
	sum := sha256.Sum256([]byte(raw))
	return "v1_" + base64.RawStdEncoding.EncodeToString(sum[:])
}
