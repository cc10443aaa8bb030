package envd

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// File URL operations, as signed.
const (
	OpRead  = "read"
	OpWrite = "write"
)

// FileSignature computes the /files URL signature the SDKs put in
// downloadUrl/uploadUrl: "v1_" + unpadded base64 of
// sha256("<path>:<op>:<username>:<token>[:<expiration>]"). path and username
// are exactly as the user passed them (unresolved; "" when absent), and
// expiration is unix seconds, "" for none.
func FileSignature(path, op, username, token, expiration string) string {
	return wire.SignFileURL(path, op, username, token, expiration)
}

// authorizeFile checks a /files request: nothing while no token is set;
// otherwise a matching X-Access-Token, or else a valid, unexpired signature.
func (s *Server) authorizeFile(r *http.Request, op string, now time.Time) error {
	token := s.st.Token()
	if token == "" {
		return nil
	}
	if got := r.Header.Get("X-Access-Token"); got != "" {
		if s.st.CheckToken(got) {
			return nil
		}
		return errdefs.New(errdefs.ErrUnauthenticated, unauthorizedMessage)
	}
	q := r.URL.Query()
	sig := q.Get("signature")
	if sig == "" {
		return errdefs.New(errdefs.ErrUnauthenticated, unauthorizedMessage)
	}
	exp := q.Get("signature_expiration")
	if exp != "" {
		secs, err := strconv.ParseInt(exp, 10, 64)
		if err != nil {
			return errdefs.New(errdefs.ErrUnauthenticated, fmt.Sprintf("invalid signature expiration %q", exp))
		}
		if secs < now.Unix() {
			return errdefs.New(errdefs.ErrUnauthenticated, "signature is already expired")
		}
	}
	want := FileSignature(q.Get("path"), op, q.Get("username"), token, exp)
	if subtle.ConstantTimeCompare([]byte(sig), []byte(want)) != 1 {
		return errdefs.New(errdefs.ErrUnauthenticated, "invalid signature")
	}
	return nil
}
