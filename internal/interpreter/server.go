// Package interpreter is warren's code-interpreter server: the process on
// port 49999 inside code-interpreter sandboxes that the official
// @e2b/code-interpreter and e2b-code-interpreter SDKs talk to (spec §4 of
// docs/e2b-protocol.md).
//
// It keeps execution contexts, each backed by one Jupyter kernel (driven by
// internal/jupyter through the Kernel interface), runs code in them in
// arrival order and streams each execution's output to the client as NDJSON
// while it runs, with bounded memory. A client that leaves interrupts its
// code; a kernel that dies is replaced and the execution says state was lost.
package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// DefaultPort is where the SDKs expect the interpreter.
const DefaultPort = wire.InterpreterPort

// Options configure a Server. Zero values take the defaults noted.
type Options struct {
	Kernels map[string]KernelConfig // language → kernel; required
	Start   StartFunc               // launches kernels; required
	// Cwd is the default working directory of contexts (/home/user).
	Cwd string
	// KernelDir is where kernel processes start (Cwd); a context's own cwd
	// is applied with a snippet.
	KernelDir string
	// EnvdURL is envd's /envs endpoint; empty skips loading the global env.
	EnvdURL           string
	KeepaliveInterval time.Duration // silence before a keepalive line (5s)
	MaxLineBytes      int           // longest stdout/stderr text per line (1 MiB)
	MaxOutputBytes    int64         // output per execution before truncation (64 MiB)
	// InterruptGrace is how long a kernel may take to stop after an
	// interrupt before it is replaced (10s).
	InterruptGrace time.Duration
	// DeathGrace is how long to wait for Done after a failed Execute to
	// decide whether the kernel died (500ms).
	DeathGrace time.Duration
}

func (o *Options) setDefaults() {
	if o.Cwd == "" {
		o.Cwd = "/home/user"
	}
	if o.KernelDir == "" {
		o.KernelDir = o.Cwd
	}
	if o.KeepaliveInterval <= 0 {
		o.KeepaliveInterval = 5 * time.Second
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 1 << 20
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = 64 << 20
	}
	if o.InterruptGrace <= 0 {
		o.InterruptGrace = 10 * time.Second
	}
	if o.DeathGrace <= 0 {
		o.DeathGrace = 500 * time.Millisecond
	}
}

// Validate checks the options that have no default.
func (o *Options) Validate() error {
	if o.Start == nil {
		return errdefs.New(errdefs.ErrInvalidArgument, "interpreter: Start is required")
	}
	if _, ok := o.Kernels["python"]; !ok {
		return errdefs.New(errdefs.ErrInvalidArgument, "interpreter: no python kernel configured")
	}
	return nil
}

// Server serves the interpreter API.
type Server struct {
	opts Options
	env  *globalEnv

	mu       sync.Mutex // mu protects contexts, defaults, pending, created and closed
	closed   bool       // Close ran: a context that finishes starting now is shut down
	contexts map[string]*Context
	created  uint64              // contexts ever registered; each one's number orders GET /contexts
	defaults map[string]*Context // language → its default context
	pending  map[string]*pendingDefault
}

// New returns a server with no contexts yet; call Prestart to start the
// default Python kernel ahead of the first execution.
func New(opts Options) (*Server, error) {
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Server{
		opts:     opts,
		env:      newGlobalEnv(opts.EnvdURL),
		contexts: map[string]*Context{},
		defaults: map[string]*Context{},
		pending:  map[string]*pendingDefault{},
	}, nil
}

// startupLanguages are the languages whose default context the reference
// server has from the start, besides python.
var startupLanguages = []string{"javascript"}

// Prestart creates the default Python context so the first runCode does
// not pay for a kernel start. The reference server's other default
// contexts (javascript) exist from then on too: their kernels start in the
// background when the language is in warm, else on first use.
func (s *Server) Prestart(ctx context.Context, warm ...string) error {
	_, err := s.defaultContext(ctx, "python")
	if err != nil {
		// A kernel that missed its start budget (a loaded host) is
		// retried on first use; until then its context is listed, as the
		// reference server lists it from the start, before javascript.
		if derr := s.declare("python"); derr != nil {
			log.G(ctx).Warn("declaring the default python context", "err", derr)
		}
	}
	for _, lang := range startupLanguages {
		if _, ok := s.opts.Kernels[languages[lang].kernel]; !ok {
			continue
		}
		if !slices.Contains(warm, lang) {
			if err := s.declare(lang); err != nil {
				log.G(ctx).Warn("declaring a default context", "language", lang, "err", err)
			}
			continue
		}
		s.mu.Lock()
		if s.defaults[lang] == nil && s.pending[lang] == nil {
			p := &pendingDefault{done: make(chan struct{})}
			s.pending[lang] = p
			go s.createDefault(context.WithoutCancel(ctx), lang, p)
		}
		s.mu.Unlock()
	}
	return err
}

// Handler returns the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /execute", s.handleExecute)
	mux.HandleFunc("POST /contexts", s.handleCreateContext)
	mux.HandleFunc("GET /contexts", s.handleListContexts)
	mux.HandleFunc("DELETE /contexts/{id}", s.handleDeleteContext)
	mux.HandleFunc("POST /contexts/{id}/restart", s.handleRestartContext)
	mux.HandleFunc("GET /health", s.handleHealth)
	return withLogger(mux)
}

// Close shuts every kernel down.
func (s *Server) Close(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	all := make([]*Context, 0, len(s.contexts))
	for _, c := range s.contexts {
		all = append(all, c)
	}
	s.contexts = map[string]*Context{}
	s.defaults = map[string]*Context{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Go(func() { c.shutdown(ctx) })
	}
	wg.Wait()
}

// withLogger attaches the request's fields to the logger once, at the edge.
func withLogger(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := log.With(r.Context(), "method", r.Method, "path", r.URL.Path)
		log.G(ctx).Debug("request")
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeText writes a plain-text body, the shape the SDKs show to users on
// error statuses.
func writeText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = fmt.Fprint(w, msg)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError classifies err once, here at the edge.
func writeError(ctx context.Context, w http.ResponseWriter, err error) {
	switch {
	case errdefs.IsNotFound(err):
		writeText(w, http.StatusNotFound, err.Error())
	case errdefs.IsInvalidArgument(err):
		writeText(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, context.Canceled):
		// The client is gone; the status is for the logs only.
		writeText(w, 499, err.Error())
	default:
		log.G(ctx).Error("request failed", "err", err)
		writeText(w, http.StatusInternalServerError, err.Error())
	}
}
