package warren

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// CodeContext is an interpreter context: a kernel of its own, with its
// own variables, imports and working directory. Runs in one context see
// what earlier runs there left; other contexts do not.
type CodeContext struct {
	ID       string `json:"id"`
	Language string `json:"language"`
	Cwd      string `json:"cwd"`
}

// CodeContextOptions are a new context's settings; the zero value is a
// Python context in /home/user.
type CodeContextOptions struct {
	Cwd      string `json:"cwd,omitempty"`
	Language string `json:"language,omitempty"`
}

// CreateCodeContext starts a new context, for RunCodeOptions.Context.
// Each one runs a kernel, which holds memory until RemoveCodeContext.
func (s *Sandbox) CreateCodeContext(ctx context.Context, o CodeContextOptions) (*CodeContext, error) {
	var c CodeContext
	if err := s.interpreterJSON(ctx, http.MethodPost, "/contexts", o, &c); err != nil {
		return nil, fmt.Errorf("creating a code context: %w", err)
	}
	return &c, nil
}

// ListCodeContexts returns the sandbox's contexts, the default ones of
// each language included.
func (s *Sandbox) ListCodeContexts(ctx context.Context) ([]CodeContext, error) {
	var out []CodeContext
	if err := s.interpreterJSON(ctx, http.MethodGet, "/contexts", nil, &out); err != nil {
		return nil, fmt.Errorf("listing code contexts: %w", err)
	}
	return out, nil
}

// RestartCodeContext restarts a context's kernel: its state is lost, its
// language and working directory stay. A missing context is ErrNotFound.
func (s *Sandbox) RestartCodeContext(ctx context.Context, id string) error {
	if err := s.interpreterJSON(ctx, http.MethodPost, "/contexts/"+url.PathEscape(id)+"/restart", nil, nil); err != nil {
		return fmt.Errorf("restarting code context %s: %w", id, err)
	}
	return nil
}

// RemoveCodeContext stops a context's kernel and forgets it. A missing
// context is ErrNotFound.
func (s *Sandbox) RemoveCodeContext(ctx context.Context, id string) error {
	if err := s.interpreterJSON(ctx, http.MethodDelete, "/contexts/"+url.PathEscape(id), nil, nil); err != nil {
		return fmt.Errorf("removing code context %s: %w", id, err)
	}
	return nil
}

// interpreterJSON makes one request of the interpreter and decodes its
// JSON answer into out (when not nil).
func (s *Sandbox) interpreterJSON(ctx context.Context, method, path string, in, out any) error {
	resp, err := s.interpreterDo(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("warren: decoding the interpreter's answer: %w", err)
	}
	return nil
}

// interpreterDo sends a request to the sandbox's code interpreter (port
// 49999, through warren's proxy) with in as its JSON body (nil: none).
// An answer other than 2xx is an *APIError, read as envd's are: a
// sandbox the proxy no longer knows is ErrNotFound.
func (s *Sandbox) interpreterDo(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("warren: encoding the request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.baseURL(InterpreterPort)+path, body)
	if err != nil {
		return nil, fmt.Errorf("warren: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.httpClient(InterpreterPort).Do(req)
	if err != nil {
		return nil, fmt.Errorf("warren: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, httpError(resp)
	}
	return resp, nil
}
