// Package selftest probes a live warren server's isolation from the inside
// of its sandboxes: each probe tries something a sandbox must not manage
// (mount, load modules, see the host, reach the host or a neighbour, leave
// through envd) and, where it makes the probe meaningful, a control that
// must work. `warren selftest isolation` prints the verdicts; the e2e
// tests run the same probes as named tests on both backends. Probes send
// traffic only to sandboxes they created and to listeners they start.
package selftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// Client talks to a warren server through the Go SDK, as any client does.
type Client struct {
	URL    string // the API and sandbox traffic, e.g. http://127.0.0.1:3000
	APIKey string
	HTTP   *http.Client

	once sync.Once
	sdk  *warren.Client
	err  error
}

// Sandbox is one sandbox a probe created.
type Sandbox struct {
	*warren.Sandbox
	// Shell runs Run's scripts; "" means /bin/bash.
	Shell string
}

func (c *Client) client() (*warren.Client, error) {
	c.once.Do(func() {
		c.sdk, c.err = warren.New(warren.Config{APIURL: c.URL, APIKey: c.APIKey, SandboxURL: c.URL, HTTPClient: c.HTTP})
	})
	return c.sdk, c.err
}

// Create makes a sandbox from template that lives 10 minutes unless o
// says otherwise; the caller kills it.
func (c *Client) Create(ctx context.Context, template string, o *warren.CreateOptions) (*Sandbox, error) {
	sdk, err := c.client()
	if err != nil {
		return nil, err
	}
	opts := warren.CreateOptions{}
	if o != nil {
		opts = *o
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Minute
	}
	sb, err := sdk.Create(ctx, template, opts)
	if err != nil {
		return nil, err
	}
	return &Sandbox{Sandbox: sb}, nil
}

// Kill removes the sandbox; errors are ignored (it may be gone).
func (s *Sandbox) Kill(ctx context.Context) { _ = s.Sandbox.Kill(ctx) }

// Result is a finished command.
type Result struct {
	ExitCode       int
	Stdout, Stderr string
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.ExitCode, trim(r.Stdout), trim(r.Stderr))
}

func trim(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// Run runs script with bash (or Shell) as user ("root" or "user") and
// waits for it, for at most a minute. Each stream keeps its first MiB.
func (s *Sandbox) Run(ctx context.Context, user, script string) (Result, error) {
	shell := s.Shell
	if shell == "" {
		shell = "/bin/bash"
	}
	h, err := s.Commands.Exec(ctx, shell, []string{"-c", script}, warren.CommandOptions{User: user, MaxOutput: 1 << 20})
	if err != nil {
		return Result{}, err
	}
	res, err := h.Wait()
	var exit *warren.CommandExitError
	if errors.As(err, &exit) {
		err = nil
	}
	if res == nil {
		return Result{}, err
	}
	return Result{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr}, err
}

// Download reads path from the sandbox through envd's /files: the HTTP
// status and the body's first MiB (the error message when it failed).
func (s *Sandbox) Download(ctx context.Context, path string) (int, string, error) {
	var buf bytes.Buffer
	_, err := s.Files.Download(ctx, path, &limited{w: &buf, n: 1 << 20}, warren.FileOptions{User: "user"})
	return status(buf.String(), err)
}

// Upload writes content to path through envd's /files.
func (s *Sandbox) Upload(ctx context.Context, path, content string) (int, string, error) {
	e, err := s.Files.Upload(ctx, path, strings.NewReader(content), warren.FileOptions{User: "user"})
	if err != nil {
		return status("", err)
	}
	return http.StatusOK, e.Path, nil
}

// status splits an SDK outcome into the HTTP status and body the probes
// judge: an error answer is a status, not an error.
func status(body string, err error) (int, string, error) {
	var api *warren.APIError
	switch {
	case errors.As(err, &api):
		return api.Status, api.Message, nil
	case err != nil:
		return 0, "", err
	}
	return http.StatusOK, body, nil
}

// limited keeps the first n bytes written and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
