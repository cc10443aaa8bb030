package layershare

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"

	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// ServeHTTP serves GET /internal/layers/{key} to a peer: the layer of
// this node's stores whose key starts with {key}, as layer.Archive writes
// it, with the full key in a header and the stream's SHA-256 in a
// trailer. The API server authenticates the request (the cluster's
// admin key) before it gets here.
func (r *Resolver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	key := req.PathValue("key")
	var dir, full string
	for _, s := range r.opts.Stores {
		if k, ok := s.Find(key); ok {
			dir, full = s.Path(k), k
			break
		}
	}
	if dir == "" {
		writeError(w, http.StatusNotFound, fmt.Sprintf("layer %s is not on node %s", key, r.opts.Self))
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set(keyHeader, full)
	w.Header().Set("Trailer", sumTrailer)
	h := sha256.New()
	if err := layer.Archive(req.Context(), io.MultiWriter(w, h), dir); err != nil {
		// No trailer: the peer refuses what it got.
		log.G(req.Context()).Warn("serving a layer to a peer", "layer", full, "err", err)
		return
	}
	w.Header().Set(sumTrailer, hex.EncodeToString(h.Sum(nil)))
}

// writeError answers in E2B's error shape, as the rest of the API does.
func writeError(w http.ResponseWriter, status int, msg string) {
	httperr.Error(w, status, msg)
}
