package interpreter

import (
	"context"
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
	lang, target, err := s.executeTarget(r, req)
	if err != nil {
		writeError(ctx, w, err)
		return
	}
	if err := lang.validateEnv(req.EnvVars); err != nil {
		writeError(ctx, w, err)
		return
	}

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	out := newStream(w, func() { _ = rc.Flush() }, s.opts.MaxLineBytes, s.opts.MaxOutputBytes)
	// Headers go out before anything that can take long (the sandbox's env
	// from envd, a default kernel still starting), as the reference
	// server's do: a sandbox killed meanwhile then ends a started stream,
	// which the SDKs report as "killed while the request was in progress",
	// not as a 502 from the proxy.
	out.flush()
	stop := out.keepalive(s.opts.KeepaliveInterval)
	s.env.load(ctx, r.Header.Get("X-Access-Token"))
	c, err := target(ctx)
	if err == nil {
		c.run(log.With(ctx, "context", c.ID, "language", c.Language), req.Code, req.EnvVars, out)
	}
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return // the client left while the kernel started
		}
		out.errorLine(errKernel, err.Error(), "")
	}
	out.end()
}

// executeTarget checks what an execution asks for and returns the language
// it runs and how to get its context: at once for a context id, after its
// kernel starts for a language's default context. Only errors found here
// are HTTP errors; the SDKs read later ones from the stream.
func (s *Server) executeTarget(r *http.Request, req executeRequest) (*language, func(context.Context) (*Context, error), error) {
	id, lang := deref(req.ContextID), deref(req.Language)
	if id != "" && lang != "" {
		return nil, nil, errdefs.New(errdefs.ErrInvalidArgument, "Only one of context_id or language can be provided")
	}
	name := "python"
	switch {
	case id != "" && id != defaultAlias:
		c, err := s.lookup(r.Context(), id)
		if err != nil {
			return nil, nil, err
		}
		return c.lang, func(context.Context) (*Context, error) { return c, nil }, nil
	case id == "":
		var err error
		if name, err = s.resolveLanguage(lang); err != nil {
			return nil, nil, err
		}
	}
	return languages[name], func(ctx context.Context) (*Context, error) { return s.defaultContext(ctx, name) }, nil
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
