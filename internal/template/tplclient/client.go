// Package tplclient is the REST client behind `warren template ...`: the
// E2B template endpoints (request a build, upload COPY files, start, poll,
// list, tag, delete) as warren serves them, and BuildDockerfile, which
// drives a whole build the way the E2B SDK's Template.build does.
package tplclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client talks to one warren (or E2B) API.
type Client struct {
	base   string
	apiKey string
	http   *http.Client
	// PollInterval is how often Wait asks for the build status; the SDK
	// uses 200ms.
	PollInterval time.Duration
}

// New returns a client for the API at baseURL (such as
// "http://localhost:3000"), authenticating with apiKey. A nil httpClient
// means http.DefaultClient.
func New(baseURL, apiKey string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{
		base:         strings.TrimRight(baseURL, "/"),
		apiKey:       apiKey,
		http:         httpClient,
		PollInterval: 200 * time.Millisecond,
	}
}

// APIError is an error answer of the API: its {"code", "message"} body.
type APIError struct {
	StatusCode int    // HTTP status
	Code       int    // "code" of the body, normally equal to StatusCode
	Message    string // "message" of the body, or the raw body if not JSON
}

func (e *APIError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// IsNotFound reports whether err is the API saying 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.StatusCode == http.StatusNotFound || ae.Code == http.StatusNotFound)
}

// apiPath joins escaped segments into an API path. IDs and aliases may hold
// "/" or ":" (namespace/name:tag), which must stay inside one segment.
func apiPath(segs ...string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// call sends a JSON request to the API and decodes a JSON answer into out
// (when not nil). Any non-2xx answer becomes an *APIError.
func (c *Client) call(ctx context.Context, method, p string, query url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	u := c.base + p
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", c.apiKey)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := checkStatus(resp); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding %s %s answer: %w", method, p, err)
	}
	return nil
}

// checkStatus turns a non-2xx response into an *APIError.
func checkStatus(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	ae := &APIError{StatusCode: resp.StatusCode, Code: resp.StatusCode}
	var body struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil && (body.Message != "" || body.Code != 0) {
		ae.Message = body.Message
		if body.Code != 0 {
			ae.Code = body.Code
		}
	} else {
		ae.Message = strings.TrimSpace(string(raw))
	}
	return ae
}
