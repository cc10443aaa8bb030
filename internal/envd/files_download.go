package envd

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
)

// download serves GET /files: the file's raw bytes, gzipped when the client
// accepts gzip, streamed from disk.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	if err := s.authorizeFile(r, OpRead, time.Now()); err != nil {
		writeErr(w, err)
		return
	}
	u, err := s.st.User(r.URL.Query().Get("username"))
	if err != nil {
		writeErr(w, err)
		return
	}
	path := s.st.Resolve(r.URL.Query().Get("path"), u)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("path '%s' does not exist", path))
			return
		}
		writeErr(w, fmt.Errorf("opening %s: %w", path, err))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		writeErr(w, fmt.Errorf("stat %s: %w", path, err))
		return
	}
	if fi.IsDir() {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("path '%s' is a directory", path))
		return
	}
	enc, ok := negotiateEncoding(r.Header.Values("Accept-Encoding"))
	if !ok {
		writeError(w, http.StatusNotAcceptable, "no acceptable content encoding: only gzip and identity are supported")
		return
	}
	h := w.Header()
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": filepath.Base(path)}))
	h.Add("Vary", "Accept-Encoding")
	if enc == "identity" {
		// ServeContent streams from disk and handles Range and conditionals.
		http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
		return
	}
	h.Set("Content-Encoding", "gzip")
	h.Set("Content-Type", "application/octet-stream")
	gz := gzip.NewWriter(w)
	if _, err := io.Copy(gz, f); err != nil {
		log.G(r.Context()).Warn("gzip download interrupted", "path", path, "err", err)
		return
	}
	if err := gz.Close(); err != nil {
		log.G(r.Context()).Warn("gzip download interrupted", "path", path, "err", err)
	}
}

// negotiateEncoding picks gzip when the client accepts it, else identity
// unless the client refused that too (then ok is false: 406).
func negotiateEncoding(values []string) (enc string, ok bool) {
	q := map[string]float64{}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			weight := 1.0
			if qs, found := strings.CutPrefix(strings.TrimSpace(params), "q="); found {
				if f, err := strconv.ParseFloat(qs, 64); err == nil {
					weight = f
				}
			}
			q[name] = weight
		}
	}
	weight := func(name string, def float64) float64 {
		if w, ok := q[name]; ok {
			return w
		}
		if w, ok := q["*"]; ok {
			return w
		}
		return def
	}
	if weight("gzip", 0) > 0 {
		return "gzip", true
	}
	if weight("identity", 1) > 0 {
		return "identity", true
	}
	return "", false
}
