package cluster

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// signedFile routes a signed /files URL that names no sandbox (the SDK
// builds those from E2B_SANDBOX_URL) to the running sandbox whose envd
// token reproduces the signature, naming it for the node's proxy in the
// headers the SDK would have sent. envd checks the signature again.
func (a *API) signedFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	// Refused before the store is read: each check below reads every
	// running sandbox's token.
	if sig := q.Get("signature"); !strings.HasPrefix(sig, "v1_") || len(sig) > 128 {
		httperr.Error(w, http.StatusUnauthorized, "invalid signature")
		return
	}
	if exp := q.Get("signature_expiration"); exp != "" {
		if secs, err := strconv.ParseInt(exp, 10, 64); err != nil || time.Unix(secs, 0).Before(time.Now()) {
			httperr.Error(w, http.StatusUnauthorized, "the signature has expired")
			return
		}
	}
	all, err := a.opts.Store.ListSandboxes(r.Context())
	if err != nil {
		log.G(r.Context()).Error("signed file URL: listing sandboxes", "err", err)
		httperr.Error(w, http.StatusServiceUnavailable, "the store does not answer")
		return
	}
	for _, sb := range all {
		if sb.State != store.SandboxRunning || sb.EnvdAccessToken == "" || !wire.FileURLSignedBy(q, r.Method, sb.EnvdAccessToken) {
			continue
		}
		r.Header.Set("E2b-Sandbox-Id", sb.ID)
		r.Header.Set("E2b-Sandbox-Port", strconv.Itoa(wire.EnvdPort))
		a.nodes.remember(sb)
		a.traffic(w, r, sb.ID, wire.EnvdPort)
		return
	}
	httperr.Error(w, http.StatusUnauthorized, "invalid signature: it matches no running sandbox")
}
