package mcpserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testKey = "e2b_mcp_test_key"

// initialize is an MCP initialize request, the first a client sends.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
	`"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// keyedServer serves a test server's HTTP endpoint, keyed with testKey.
func keyedServer(t *testing.T) *httptest.Server {
	t.Helper()
	s, _ := newTestServer(t, Options{})
	h, err := s.Handler(HTTPOptions{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs
}

// TestHTTPKey: the HTTP endpoint answers only requests carrying its key,
// in either header the REST API reads; the rest get 401 with E2B's body.
func TestHTTPKey(t *testing.T) {
	hs := keyedServer(t)
	cases := []struct {
		name    string
		headers map[string]string
		status  int
		message string
	}{
		{"no key", nil, 401, "missing key"},
		{"wrong bearer", map[string]string{"Authorization": "Bearer nope"}, 401, "invalid key"},
		{"key as prefix", map[string]string{"Authorization": "Bearer " + testKey[:5]}, 401, "invalid key"},
		{"wrong X-API-KEY", map[string]string{"X-API-KEY": testKey + "x"}, 401, "invalid key"},
		{"basic auth", map[string]string{"Authorization": "Basic " + testKey}, 401, "missing key"},
		{"bearer", map[string]string{"Authorization": "Bearer " + testKey}, 200, ""},
		{"bearer any case", map[string]string{"Authorization": "bearer " + testKey}, 200, ""},
		{"X-API-KEY", map[string]string{"X-API-KEY": testKey}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := post(t, hs.URL, initialize, c.headers)
			defer resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if c.status != 401 {
				return
			}
			var body struct {
				Code      int    `json:"code"`
				ErrorCode string `json:"error_code"`
				Message   string `json:"message"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("401 body: %v", err)
			}
			if body.Code != 401 || body.ErrorCode != "unauthenticated" || !strings.Contains(body.Message, c.message) {
				t.Errorf("body %+v, want code 401, error_code unauthenticated and a message with %q", body, c.message)
			}
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate header")
			}
		})
	}
}

// TestHTTPNeedsKey: an endpoint without a key is refused, not served open.
func TestHTTPNeedsKey(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	if _, err := s.Handler(HTTPOptions{}); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Handler without a key: %v, want ErrNoKey", err)
	}
}

// TestHTTPBodyLimit: a request body past MaxRequestBody is refused with
// 413; one just under it is read.
func TestHTTPBodyLimit(t *testing.T) {
	hs := keyedServer(t)
	auth := map[string]string{"Authorization": "Bearer " + testKey}
	pad := func(n int) string {
		// initialize with a padding field, n bytes in all.
		head := initialize[:len(initialize)-1] + `,"pad":"`
		return head + strings.Repeat("x", n-len(head)-2) + `"}`
	}
	for _, c := range []struct {
		size   int
		status int
	}{{MaxRequestBody, 200}, {MaxRequestBody + 1, 413}} {
		resp := post(t, hs.URL, pad(c.size), auth)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("a %d-byte body: status %d, want %d", c.size, resp.StatusCode, c.status)
		}
	}
}

// TestHTTPClient: the Go MCP SDK's client, sending the key, calls a tool.
func TestHTTPClient(t *testing.T) {
	hs := keyedServer(t)
	hc := &http.Client{Transport: bearer{testKey, http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if res := call(t, cs, "run_code", map[string]any{"code": "1+1"}); res.IsError {
		t.Fatalf("run_code: %s", textOf(res))
	}
}

// bearer adds the key to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

func post(t *testing.T, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
