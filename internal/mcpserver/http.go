package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/internal/httperr"
)

// MaxRequestBody bounds one HTTP request's body: write_file's content
// travels in it, so it holds a 4 MiB file in base64 (read_file's cap) with
// room for the JSON around it. Past it the answer is 413.
const MaxRequestBody = 8 << 20

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Key is what every request must carry, as the REST API's key is
	// carried: `Authorization: Bearer <key>` or `X-API-KEY: <key>`.
	// Handler refuses to serve without one: the endpoint runs code for
	// whoever reaches it.
	Key string
	// SessionTimeout closes a session idle this long and kills its
	// sandbox (0: never).
	SessionTimeout time.Duration
}

// ErrNoKey is Handler's answer to options without a key.
var ErrNoKey = errors.New("mcp: the HTTP endpoint needs a key")

// Handler returns the streamable HTTP endpoint, which answers 401 to a
// request without o.Key.
func (s *Server) Handler(o HTTPOptions) (http.Handler, error) {
	if o.Key == "" {
		return nil, ErrNoKey
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout, Logger: quiet(s.log),
			MaxRequestBodyBytes: MaxRequestBody})
	return requireKey(o.Key, h), nil
}

// requireKey lets through only requests that carry key. The comparison
// is of digests in constant time, so neither the key's bytes nor its
// length can be found by timing the answers.
func requireKey(key string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(key))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := requestKey(r)
		if got == "" {
			unauthorized(w, "missing key: send it as Authorization: Bearer <key> or in the X-API-KEY header")
			return
		}
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			unauthorized(w, "invalid key")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requestKey is the key r carries, as the REST API reads it.
func requestKey(r *http.Request) string {
	if k := r.Header.Get("X-API-KEY"); k != "" {
		return k
	}
	auth := r.Header.Get("Authorization")
	if len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		return strings.TrimSpace(auth[7:])
	}
	return ""
}

// unauthorized answers 401 with E2B's error body.
func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="warren-mcp"`)
	httperr.Error(w, http.StatusUnauthorized, msg)
}
