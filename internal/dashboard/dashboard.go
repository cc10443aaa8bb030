// Package dashboard serves warren's web dashboard: plain ES modules, a
// stylesheet and the vendored browser libraries (xterm.js, uPlot), embedded
// in the binary and served under /dashboard/ with a same-origin-only
// Content-Security-Policy. The files need no key; every call they make to
// the API sends the key the user signed in with.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/httperr"
)

//go:embed static
var embedded embed.FS

// Prefix is the path the dashboard is served under.
const Prefix = "/dashboard/"

// CSP is the Content-Security-Policy of every dashboard response: scripts,
// styles, images and connections from warren itself only, no plugins, no
// framing. xterm.js's generated styles are applied through constructed
// stylesheets (terminal.js), which the policy allows. Images may also be
// blob: URLs, which only the page itself can make: a desktop's screen is
// fetched with envd's token in a header and shown from one (screen.js).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// contentTypes maps the extensions the dashboard ships to their types; a
// file with another extension is served as text/plain (licenses, VERSIONS).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".json": "application/json",
}

// file is one embedded file, read once.
type file struct {
	data  []byte
	etag  string
	ctype string
}

// Handler serves the embedded files. A request for Prefix itself gets
// index.html; a directory, a missing file or a path that climbs out is
// 404 with E2B's {code, message} body. Every answer carries CSP and asks
// the browser to revalidate (ETag) so a new binary's files are seen at once.
type Handler struct {
	files   map[string]file
	modTime time.Time
}

// New reads the embedded files into a Handler.
func New() *Handler {
	h := &Handler{files: map[string]file{}, modTime: time.Now()}
	root, _ := fs.Sub(embedded, "static")
	_ = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		ctype, ok := contentTypes[path.Ext(p)]
		if !ok {
			ctype = "text/plain; charset=utf-8"
		}
		h.files[p] = file{data: data, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: ctype}
		return nil
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", CSP)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "the dashboard's files are read with GET")
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		writeError(w, http.StatusNotFound, "no dashboard file "+r.URL.Path)
		return
	}
	if name == "" {
		name = "index.html"
	}
	f, ok := h.files[name]
	if !ok || !fs.ValidPath(name) {
		writeError(w, http.StatusNotFound, "no dashboard file "+r.URL.Path)
		return
	}
	hdr.Set("Content-Type", f.ctype)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", f.etag)
	http.ServeContent(w, r, name, h.modTime, bytes.NewReader(f.data))
}

// writeError answers with E2B's error body, as the API does.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	httperr.Error(w, status, msg)
}
