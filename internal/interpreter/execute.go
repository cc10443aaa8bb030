package interpreter

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// maxCodeBytes bounds the request body; code is small, a runaway client is
// not.
const maxCodeBytes = 16 << 20

// executeRequest is POST /execute. JS omits unset keys, PY sends nulls.
type executeRequest struct {
	Code      string            `json:"code"`
	ContextID *string           `json:"context_id"`
	Language  *string           `json:"language"`
	EnvVars   map[string]string `json:"env_vars"`
}

// handleExecute is POST /execute: run code and stream its output as NDJSON
// (spec §4.3). Once the 200 is sent every failure is an error line, as the
// SDKs expect.
func (s *Server) handleExecute(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req executeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxCodeBytes)).Decode(&req); err != nil {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("invalid request body: %v", err))
		return
	}
	c, err := s.executeContext(r, req)
	if err != nil {
		writeError(ctx, w, err)
		return
	}
	if err := c.lang.validateEnv(req.EnvVars); err != nil {
		writeError(ctx, w, err)
		return
	}
	ctx = log.With(ctx, "context", c.ID, "language", c.Language)
	s.env.load(ctx, r.Header.Get("X-Access-Token"))

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	out := newStream(w, func() { _ = rc.Flush() }, s.opts.MaxLineBytes, s.opts.MaxOutputBytes)
	out.flush() // headers now: JS bounds the wait for them separately
	stop := out.keepalive(s.opts.KeepaliveInterval)
	c.run(ctx, req.Code, req.EnvVars, out)
	stop()
	out.end()
}

// executeContext picks the context of an execution: by id, by language
// (that language's default) or the Python default.
func (s *Server) executeContext(r *http.Request, req executeRequest) (*Context, error) {
	id, lang := deref(req.ContextID), deref(req.Language)
	if id != "" && lang != "" {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "Only one of context_id or language can be provided")
	}
	if id != "" {
		return s.lookup(r.Context(), id)
	}
	name, err := s.resolveLanguage(lang)
	if err != nil {
		return nil, err
	}
	return s.defaultContext(r.Context(), name)
}

// resolveLanguage normalizes a language and checks a kernel runs it.
func (s *Server) resolveLanguage(lang string) (string, error) {
	name, err := normalizeLanguage(lang)
	if err == nil {
		if _, ok := s.opts.Kernels[languages[name].kernel]; ok {
			return name, nil
		}
	}
	return "", errdefs.New(errdefs.ErrInvalidArgument,
		fmt.Sprintf("Language %q is not supported; available languages: %v", lang, s.languages()))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
