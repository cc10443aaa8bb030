// Package clusterauth authenticates the cluster's own calls: the API
// role's requests to nodes and a node's requests to another. They carry a
// header signed with the cluster secret, which the API and every node
// share and nothing else holds, instead of an API key: a node's address is
// read from the store, and no key (the admin key least of all) may go to
// whatever a row there names.
//
// The header binds a timestamp, the method, the request URI and the API
// key the client showed (by its hash, which is what the store keeps; the
// key itself stays on the API), so a captured header only repeats the same
// request, and only for MaxSkew.
package clusterauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Header carries the signature.
const Header = "Warren-Cluster-Auth"

// Env names the variable that holds the secret.
const Env = "WARREN_CLUSTER_SECRET"

// MinSecretLen is the shortest secret accepted, in bytes: 32 random
// characters are beyond guessing.
const MinSecretLen = 32

// MaxSkew is how far a signature's time may be from the receiver's clock,
// either way: a replay window, and the clock difference between machines
// the cluster tolerates.
const MaxSkew = time.Minute

// version starts every signed message and header, so a later format can
// be told apart.
const version = "v1"

// Signer signs and verifies with one secret.
type Signer struct {
	secret []byte
	now    func() time.Time
}

// New returns a Signer for secret (surrounding space dropped, as from a
// file); now is the clock, nil for time.Now.
func New(secret string, now func() time.Time) (*Signer, error) {
	secret = strings.TrimSpace(secret)
	if len(secret) < MinSecretLen {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf(
			"the cluster secret must be at least %d characters (it has %d); make one with: openssl rand -hex 32", MinSecretLen, len(secret)))
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{secret: []byte(secret), now: now}, nil
}

// Sign sets r's Header for r's method and URI (as r.URL writes it on the
// wire) on behalf of a client whose API key hashes to keyHash ("": no key,
// as for a node's own call).
func (s *Signer) Sign(r *http.Request, keyHash string) {
	t := strconv.FormatInt(s.now().Unix(), 10)
	mac := s.mac(t, r.Method, r.URL.RequestURI(), keyHash)
	r.Header.Set(Header, strings.Join([]string{version, t, keyHash, mac}, "."))
}

// Verify checks the Header of r, a request received by a server, and
// returns the key hash it vouches for ("" when none). A missing, malformed,
// stale or wrongly signed header is an ErrUnauthenticated error.
func (s *Signer) Verify(r *http.Request) (keyHash string, err error) {
	h := r.Header.Get(Header)
	if h == "" {
		return "", errdefs.New(errdefs.ErrUnauthenticated, "missing cluster credential: only the cluster's API and nodes may call this")
	}
	parts := strings.Split(h, ".")
	if len(parts) != 4 || parts[0] != version || !validHash(parts[2]) {
		return "", errdefs.New(errdefs.ErrUnauthenticated, "malformed cluster credential")
	}
	unix, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return "", errdefs.New(errdefs.ErrUnauthenticated, "malformed cluster credential")
	}
	uri := r.RequestURI
	if uri == "" { // a request made in-process, not read from the wire
		uri = r.URL.RequestURI()
	}
	want := s.mac(parts[1], r.Method, uri, parts[2])
	if !hmac.Equal([]byte(want), []byte(parts[3])) {
		return "", errdefs.New(errdefs.ErrUnauthenticated, "wrong cluster credential: the API and every node need the same cluster secret")
	}
	if age := s.now().Sub(time.Unix(unix, 0)); age > MaxSkew || age < -MaxSkew {
		return "", errdefs.New(errdefs.ErrUnauthenticated, fmt.Sprintf(
			"stale cluster credential: signed %v away from this node's clock, more than %v (are the machines' clocks in sync?)", age.Round(time.Second), MaxSkew))
	}
	return parts[2], nil
}

func (s *Signer) mac(t, method, uri, keyHash string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(strings.Join([]string{version, t, method, uri, keyHash}, "\n")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validHash says whether s is "" or an API key hash (64 lowercase hex).
func validHash(s string) bool {
	if s == "" {
		return true
	}
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && strings.ToLower(s) == s
}
