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
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/warren-sandbox/warren/internal/wire"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
)

// Client talks to a warren server as the SDKs do.
type Client struct {
	URL    string // the API and sandbox traffic, e.g. http://127.0.0.1:3000
	APIKey string
	HTTP   *http.Client
}

// Sandbox is one sandbox a probe created.
type Sandbox struct {
	ID    string
	token string
	c     *Client
	// Shell runs Run's scripts; "" means /bin/bash.
	Shell string
}

// Create makes a sandbox from template; the caller kills it.
func (c *Client) Create(ctx context.Context, template string, extra map[string]any) (*Sandbox, error) {
	body := map[string]any{"templateID": template, "timeout": 600}
	for k, v := range extra {
		body[k] = v
	}
	var out struct {
		SandboxID       string `json:"sandboxID"`
		EnvdAccessToken string `json:"envdAccessToken"`
	}
	if err := c.api(ctx, http.MethodPost, "/v2/sandboxes", body, &out); err != nil {
		return nil, err
	}
	return &Sandbox{ID: out.SandboxID, token: out.EnvdAccessToken, c: c}, nil
}

// Kill removes the sandbox; errors are ignored (it may be gone).
func (s *Sandbox) Kill(ctx context.Context) {
	_ = s.c.api(ctx, http.MethodDelete, "/sandboxes/"+s.ID, nil, nil)
}

func (c *Client) api(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", c.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// envdHeaders are what the SDKs send to reach envd through warren.
func (s *Sandbox) envdHeaders(h http.Header, user string) {
	h.Set("E2b-Sandbox-Id", s.ID)
	h.Set("E2b-Sandbox-Port", strconv.Itoa(wire.EnvdPort))
	if s.token != "" {
		h.Set("X-Access-Token", s.token)
	}
	if user != "" {
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":")))
	}
}

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

// Run runs script with bash as user ("root" or "user") and waits for it.
func (s *Sandbox) Run(ctx context.Context, user, script string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	client := processconnect.NewProcessClient(s.c.HTTP, s.c.URL)
	shell := s.Shell
	if shell == "" {
		shell = "/bin/bash"
	}
	req := connect.NewRequest(&pb.StartRequest{Process: &pb.ProcessConfig{Cmd: shell, Args: []string{"-c", script}}})
	s.envdHeaders(req.Header(), user)
	stream, err := client.Start(ctx, req)
	if err != nil {
		return Result{}, err
	}
	defer stream.Close()
	var res Result
	var out, errOut bytes.Buffer
	ended := false
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		if d := ev.GetData(); d != nil {
			if out.Len() < 1<<20 {
				out.Write(d.GetStdout())
			}
			if errOut.Len() < 1<<20 {
				errOut.Write(d.GetStderr())
			}
		}
		if e := ev.GetEnd(); e != nil {
			res.ExitCode, ended = int(e.GetExitCode()), true
		}
	}
	if err := stream.Err(); err != nil {
		return res, err
	}
	if !ended {
		return res, errors.New("command stream ended without an end event")
	}
	res.Stdout, res.Stderr = out.String(), errOut.String()
	return res, nil
}

// Download reads path from the sandbox through envd's /files.
func (s *Sandbox) Download(ctx context.Context, path string) (int, string, error) {
	return s.files(ctx, http.MethodGet, path, nil)
}

// Upload writes content to path through envd's /files (multipart).
func (s *Sandbox) Upload(ctx context.Context, path, content string) (int, string, error) {
	var b bytes.Buffer
	const boundary = "selftestboundary"
	fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n%s\r\n--%[1]s--\r\n", boundary, content)
	return s.files(ctx, http.MethodPost, path, &b, "multipart/form-data; boundary="+boundary)
}

func (s *Sandbox) files(ctx context.Context, method, path string, body io.Reader, contentType ...string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.c.URL+"/files?username=user&path="+url.QueryEscape(path), body)
	if err != nil {
		return 0, "", err
	}
	s.envdHeaders(req.Header, "")
	if len(contentType) > 0 {
		req.Header.Set("Content-Type", contentType[0])
	}
	resp, err := s.c.HTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(data), nil
}
