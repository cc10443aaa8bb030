package apiserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/template/builder"
)

// maxUpload bounds one upload of COPY sources; it is a variable for tests.
var maxUpload int64 = 8 << 30

// uploadTTL is how long an upload link stays valid.
const uploadTTL = time.Hour

// templateFiles serves GET /templates/{templateID}/files/{hash}: whether
// the COPY sources with that hash are stored, and if not, a link to PUT
// them to. The SDK sends that PUT without its API key, so the link is
// signed instead.
func (s *Server) templateFiles(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	id, hash := r.PathValue("templateID"), r.PathValue("hash")
	tpl, err := s.opts.Store.GetTemplate(r.Context(), id)
	if err != nil {
		fail(w, r, err)
		return
	}
	if s.opts.Builder.HasFiles(builder.TeamFiles(tpl.TeamID, hash)) {
		writeJSON(w, http.StatusCreated, rest.FileLink{Present: true})
		return
	}
	exp := strconv.FormatInt(time.Now().Add(uploadTTL).Unix(), 10)
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s/templates/%s/files/%s?expires=%s&signature=%s", scheme, r.Host, id, hash, exp, s.uploadSignature(id, hash, exp))
	writeJSON(w, http.StatusCreated, rest.FileLink{URL: &url, Headers: &rest.StringMap{}})
}

func (s *Server) uploadSignature(id, hash, exp string) string {
	m := hmac.New(sha256.New, s.uploadKey)
	fmt.Fprintf(m, "%s\x00%s\x00%s", id, hash, exp)
	return hex.EncodeToString(m.Sum(nil))
}

// uploadFiles serves the PUT of a signed upload link.
func (s *Server) uploadFiles(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	id, hash := r.PathValue("templateID"), r.PathValue("hash")
	exp := r.URL.Query().Get("expires")
	sig := r.URL.Query().Get("signature")
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || time.Now().Unix() > n || !hmac.Equal([]byte(sig), []byte(s.uploadSignature(id, hash, exp))) {
		fail(w, r, errdefs.New(errdefs.ErrPermissionDenied, "the upload link is invalid or has expired; ask for a new one"))
		return
	}
	tpl, err := s.opts.Store.GetTemplate(r.Context(), id)
	if err != nil {
		fail(w, r, err)
		return
	}
	if r.ContentLength > maxUpload {
		fail(w, r, errdefs.New(errdefs.ErrTooLarge, fmt.Sprintf("the upload is larger than %d bytes, the most a build's files take", int64(maxUpload))))
		return
	}
	if err := s.opts.Builder.SaveFiles(builder.TeamFiles(tpl.TeamID, hash), r.Body, maxUpload); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}
