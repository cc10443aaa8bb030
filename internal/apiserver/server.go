// Package apiserver is warren's E2B-compatible REST control plane: one file
// per endpoint, the one route table (routes.go) that the one-machine server,
// a node and a cluster's API role all serve, API-key auth, and the single
// place where error classes from errdefs become HTTP statuses and E2B's
// {"code","error_code","message"} error body (through internal/httperr).
package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/internal/admission"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// Options configure a Server.
type Options struct {
	// Manager runs sandboxes; nil only on the server that answers while
	// warren starts (every authenticated route is 503 then).
	Manager Sandboxes
	// Records answers lists and lookups of sandboxes and snapshots; nil
	// means Manager. A cluster's API role sets it (and no Manager).
	Records Records
	Store   store.Store
	// Domain is returned to SDKs as the sandbox domain, so getHost(port)
	// gives `<port>-<id>.<domain>`.
	Domain string
	// MaxTimeout caps the lifetime a request may ask for; 0 = no cap.
	MaxTimeout time.Duration
	// MaxCPUCount and MaxMemoryMB cap a create's cpuCount and memoryMB;
	// 0 refuses them.
	MaxCPUCount, MaxMemoryMB int
	// Builder builds templates; nil answers 501 to build requests.
	Builder Builder
	// Images imports images for builds; nil answers 501.
	Images Images
	// ScratchDir holds uploads being imported.
	ScratchDir string
	// Metrics serves GET /metrics (Prometheus' text format); nil answers 501.
	Metrics http.Handler
	// Events checks webhook URLs and syncs event lists with recording
	// (*events.Service); nil answers 501 to registering a webhook.
	Events Events
	// ObserveRequest, when set, is told each request's route pattern ("" or
	// "/" when no route matched), status and duration.
	ObserveRequest func(route string, status int, took time.Duration)
	// NodeDeadAfter: GET /nodes reports a node dead whose heartbeat is
	// older (--node-dead-after); 0 means DefaultNodeDeadAfter.
	NodeDeadAfter time.Duration
	// Starts reports the start queue (GET /admission); nil, as on a
	// cluster's API role, answers 404.
	Starts func() admission.Stats
	// Layers serves GET /internal/layers/{key} to the cluster's other
	// nodes (layershare.Resolver); nil, as in one-machine mode, answers
	// 404.
	Layers http.Handler
	// Volumes answers /volumes and /volumecontent (*volume.Service); nil
	// answers 501: volumes are not set up on this server.
	Volumes Volumes
	// Relay, on a cluster's API role, serves the routes only a node can
	// answer (internal/cluster); nil on one machine and on a node.
	Relay Relay
	// Cluster verifies the cluster's own calls (a node's): requests the
	// API role forwards carry the hash of the client's key signed with
	// the cluster secret instead of the key, and GET /internal/layers
	// takes nothing else. nil (one machine, the API role) refuses
	// /internal/layers and ignores the header.
	Cluster *clusterauth.Signer
	// NodeName is the cluster node this server runs on ("" in one-machine
	// mode): it owns the idempotency keys of the creates it runs.
	NodeName string
}

// Server serves the REST API.
type Server struct {
	opts Options
	mux  *http.ServeMux
	// starting: the listener is open but the sandbox machinery is not
	// built yet; /health and the authenticated endpoints answer 503.
	starting bool
	// uploadKey signs upload links for build files.
	uploadKey []byte
	// patterns are the routes served, as registered (for the test that
	// holds api/openapi.yaml to them).
	patterns []string
	// idem serialises the creates that share an Idempotency-Key.
	idem idemGuard
}

// New returns a Server with everything it needs in opts: build it once
// the manager and the builder exist.
func New(opts Options) *Server {
	s := &Server{opts: opts, mux: http.NewServeMux(), uploadKey: make([]byte, 32)}
	_, _ = rand.Read(s.uploadKey)
	s.routes()
	return s
}

// records is what this server's own routes read of the sandboxes.
func (s *Server) records() Records {
	if s.opts.Records != nil {
		return s.opts.Records
	}
	return s.opts.Manager
}

// Starting returns what the listener serves while warren prepares: GET
// /health and every authenticated endpoint answer 503 with E2B's error
// body and Retry-After; an unknown route is 404 and a removed endpoint 410,
// as on the server New returns, which replaces it once everything is built.
func Starting() http.Handler {
	s := &Server{mux: http.NewServeMux(), starting: true}
	s.routes()
	return s
}

// noRoute answers a request no route takes: 405 with Allow when the path
// is served with other methods (the catch-all keeps the mux from saying
// so itself), 404 otherwise.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: this path is served with %s", r.Method, r.URL.Path, strings.Join(allow, ", ")))
}

// handle serves pattern with h and records it.
func (s *Server) handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	s.patterns = append(s.patterns, pattern)
}

// openAPI serves the API's description; it needs no key.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(api.OpenAPI)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.ObserveRequest != nil {
		s.serveObserved(w, r)
		return
	}
	s.serve(w, r)
}

// serve routes r, answering 500 for a handler that panics.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.G(r.Context()).Error("panic in API handler", "panic", v, "path", r.URL.Path)
			writeError(w, http.StatusInternalServerError, "internal error")
		}
	}()
	s.mux.ServeHTTP(w, r)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.starting {
		writeError(w, http.StatusServiceUnavailable, "warren is starting: templates are not ready yet")
		return
	}
	if s.opts.Relay != nil {
		if err := s.opts.Relay.Health(r); err != nil {
			fail(w, r, err)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "OK")
}

type keyCtx struct{}

var errMissingKey = errdefs.New(errdefs.ErrUnauthenticated, "missing API key: send it in the X-API-KEY header")

// principal is the stored key the request names, unexpired; an
// ErrUnauthenticated error saying what is wrong otherwise. A request
// carries its key (X-API-KEY, or Authorization: Bearer), except on a
// node one the API role forwarded: that names its key by hash under the
// cluster's signature (a request with that header is judged by it alone).
// Scopes are the caller's to check.
func (s *Server) principal(r *http.Request) (*store.APIKey, error) {
	if s.opts.Cluster == nil || r.Header.Get(clusterauth.Header) == "" {
		key := apikey.FromRequest(r)
		if key == "" {
			return nil, errMissingKey
		}
		return principalByHash(r, s.opts.Store, apikey.Hash(key))
	}
	hash, err := s.opts.Cluster.Verify(r)
	if err != nil {
		return nil, err
	}
	if hash == "" {
		return nil, errMissingKey
	}
	return principalByHash(r, s.opts.Store, hash)
}

// principalByHash finds the stored key whose secret hashes to hash.
func principalByHash(r *http.Request, st store.Store, hash string) (*store.APIKey, error) {
	k, err := st.GetAPIKeyByHash(r.Context(), hash)
	if errors.Is(err, errdefs.ErrUnavailable) {
		// The key may well be good: a 401 would make clients give up.
		return nil, fmt.Errorf("checking the API key: %w", err)
	}
	if err != nil {
		if !errdefs.IsNotFound(err) {
			log.G(r.Context()).Error("looking up API key", "err", err)
		}
		return nil, errdefs.New(errdefs.ErrUnauthenticated, "invalid API key")
	}
	if apikey.Expired(k, time.Now()) {
		return nil, errdefs.New(errdefs.ErrUnauthenticated, "this API key expired at "+k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return k, nil
}

// allowed is k when it holds scope now; an ErrPermissionDenied error
// otherwise.
func allowed(r *http.Request, k *store.APIKey, scope string) (*store.APIKey, error) {
	if !apikey.Allows(k, scope, time.Now()) {
		return nil, errdefs.New(errdefs.ErrPermissionDenied, fmt.Sprintf("this API key is limited to %s; %s %s needs the scope %s",
			strings.Join(k.Scopes, ", "), r.Method, r.URL.Path, scope))
	}
	return k, nil
}

// authenticate checks X-API-KEY against the stored key hashes, then that
// the key has not expired and holds scope.
func (s *Server) authenticate(scope string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.starting {
			writeError(w, http.StatusServiceUnavailable, "warren is starting: try again shortly")
			return
		}
		k, err := s.principal(r)
		if err == nil {
			k, err = allowed(r, k, scope)
		}
		if err != nil {
			fail(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyCtx{}, k)))
	})
}

// clusterOnly serves next to the cluster's API and nodes only: requests
// signed with the cluster secret. No API key is taken, the admin key
// included, so a node never needs to send one to another.
func (s *Server) clusterOnly(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.starting {
			writeError(w, http.StatusServiceUnavailable, "warren is starting: try again shortly")
			return
		}
		if s.opts.Cluster == nil {
			writeError(w, http.StatusNotFound, "this server shares no layers: it is not a cluster node")
			return
		}
		if _, err := s.opts.Cluster.Verify(r); err != nil {
			fail(w, r, err)
			return
		}
		next(w, r)
	})
}

func keyID(ctx context.Context) string {
	if k, ok := ctx.Value(keyCtx{}).(*store.APIKey); ok {
		return k.ID
	}
	return ""
}

// maxBody bounds every JSON request body.
const maxBody = 1 << 20

// readBody reads r's body up to limit bytes; a longer one (by its
// Content-Length, before anything is read, or as it arrives chunked) is
// ErrTooLarge, answered 413.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, bodyTooLarge(limit)
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "reading request body: "+err.Error())
	}
	if int64(len(data)) > limit {
		return nil, bodyTooLarge(limit)
	}
	return data, nil
}

func bodyTooLarge(limit int64) error {
	return errdefs.New(errdefs.ErrTooLarge, fmt.Sprintf("request body is larger than %d bytes, the most this endpoint takes", limit))
}

// decode reads a JSON body into v. An empty body leaves v as is when
// optional; bodies may arrive chunked, without Content-Length.
func decode(r *http.Request, v any, optional bool) error {
	data, err := readBody(r, maxBody)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		if optional {
			return nil
		}
		return errdefs.New(errdefs.ErrInvalidArgument, "request body is required")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return errdefs.New(errdefs.ErrInvalidArgument, "malformed JSON body: "+err.Error())
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError sends E2B's error body with the error code of status
// (httperr.ForStatus); code always equals the HTTP status, since the JS
// SDK decides "not found" by body.code.
func writeError(w http.ResponseWriter, status int, msg string) { httperr.Error(w, status, msg) }

// fail classifies err once (httperr: status and error code) and answers.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case r.Context().Err() != nil:
		// The client went away (while its create waited its turn, or
		// booted: the boot is then stopped, "signal: killed"): nobody
		// reads the answer, and it is no server error.
		log.G(r.Context()).Debug("request abandoned by its client", "method", r.Method, "path", r.URL.Path, "err", err)
	case statusOf(err) == http.StatusInternalServerError:
		log.G(r.Context()).Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	httperr.Fail(w, err)
}

// statusOf is the HTTP status of err's class; httperr.CodeOf, beside it,
// is its error_code.
func statusOf(err error) int { return httperr.Status(err) }
