package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// newTestServer returns a ready API server with one valid key. Its manager
// has a backend slot but no backend: these tests never get as far as
// creating a sandbox, which the end-to-end suite covers.
func newTestServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	st := sqlitetest.Open(t)
	key, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.CreateAPIKey(ctx, &store.APIKey{ID: "k1", Name: "test", Hash: apikey.Hash(key), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutTemplate(ctx, &store.Template{ID: "base", Aliases: []string{"base"}, RootfsPath: "/nonexistent/base"}); err != nil {
		t.Fatal(err)
	}
	mgr, err := lifecycle.New(lifecycle.Options{
		Store: st, Backends: map[string]runtime.Backend{"runc": nil}, DefaultBackend: "runc",
		TemplateHints: map[string]string{"desktop": "start warren with --desktop to build and serve it"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Store: st, Manager: newMachine(mgr, st, ""), Domain: "example.test", MaxTimeout: time.Hour, MaxCPUCount: 4, MaxMemoryMB: 2048})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, key
}

type errorBody struct {
	Code      *int    `json:"code"`
	ErrorCode *string `json:"error_code"`
	Message   *string `json:"message"`
}

func TestErrorsHaveE2BShape(t *testing.T) {
	t.Parallel()
	srv, key := newTestServer(t)
	const unknown = "doesnotexist0000"
	tests := []struct {
		name, method, path, body, key string
		status                        int
		contains                      string
	}{
		{"no key", "GET", "/v2/sandboxes", "", "-", 401, "API key"},
		{"wrong key", "GET", "/v2/sandboxes", "", "e2b_" + strings.Repeat("0", 40), 401, "invalid API key"},
		{"malformed json", "POST", "/v2/sandboxes", `{"templateID":`, "", 400, "malformed JSON"},
		{"empty body", "POST", "/sandboxes", ``, "", 400, "body is required"},
		{"missing template", "POST", "/v2/sandboxes", `{"timeout":10}`, "", 400, "templateID is required"},
		{"unknown template", "POST", "/v2/sandboxes", `{"templateID":"nope"}`, "", 404, "template 'nope' not found"},
		{"template left out", "POST", "/v2/sandboxes", `{"templateID":"desktop"}`, "", 404, "template 'desktop' not found: start warren with --desktop"},
		{"negative timeout", "POST", "/v2/sandboxes", `{"templateID":"base","timeout":-1}`, "", 400, "negative"},
		{"absurd timeout", "POST", "/v2/sandboxes", `{"templateID":"base","timeout":99999999999}`, "", 400, "longer than"},
		{"timeout over cap", "POST", "/sandboxes", `{"templateID":"base","timeout":7200}`, "", 400, "longer than"},
		{"bad env name", "POST", "/v2/sandboxes", `{"templateID":"base","envVars":{"A B":"1"}}`, "", 400, "not a valid variable name"},
		{"oversized metadata", "POST", "/v2/sandboxes", `{"templateID":"base","metadata":` + bigMap(101) + `}`, "", 400, "at most 100"},
		{"oversized body", "POST", "/v2/sandboxes", `{"templateID":"base","metadata":{"k":"` + strings.Repeat("x", maxBody) + `"}}`, "", 413, "larger than"},
		{"cpu over max", "POST", "/v2/sandboxes", `{"templateID":"base","cpuCount":5}`, "", 400, "cpuCount 5 is more than this server allows (4)"},
		{"zero cpu", "POST", "/v2/sandboxes", `{"templateID":"base","cpuCount":0}`, "", 400, "cpuCount must be positive"},
		{"memory over max", "POST", "/v2/sandboxes", `{"templateID":"base","memoryMB":4096}`, "", 400, "memoryMB 4096 is more"},
		{"reboot-only pause with autoResume", "POST", "/v2/sandboxes", `{"templateID":"base","autoPause":true,"autoPauseMemory":false,"autoResume":{"enabled":true}}`, "", 400, "autoPauseMemory false cannot be combined with autoResume"},
		{"memory too small", "POST", "/v2/sandboxes", `{"templateID":"base","memoryMB":8}`, "", 400, "at least 64"},
		{"domain egress", "POST", "/v2/sandboxes", `{"templateID":"base","network":{"allowOut":["example.com"],"denyOut":["0.0.0.0/0"]}}`, "", 400, "cannot enforce domain rules"},
		{"httpsPorts with envd's port", "POST", "/v2/sandboxes", `{"templateID":"base","network":{"httpsPorts":[49983]}}`, "", 400, "envd's port"},
		{"httpsPorts out of range", "POST", "/v2/sandboxes", `{"templateID":"base","network":{"httpsPorts":[0]}}`, "", 400, "not a port number"},
		{"bad denyOut", "POST", "/v2/sandboxes", `{"templateID":"base","network":{"denyOut":["nope"]}}`, "", 400, "not an IP address or CIDR"},
		{"network of unknown", "PUT", "/sandboxes/" + unknown + "/network", `{"denyOut":["0.0.0.0/0"]}`, "", 404, unknown},
		{"network bad json", "PUT", "/sandboxes/" + unknown + "/network", `{"denyOut":`, "", 400, "decoding body"},
		{"fork unknown", "POST", "/sandboxes/" + unknown + "/fork", `{"count":1}`, "", 404, unknown},
		{"snapshot unknown", "POST", "/sandboxes/" + unknown + "/snapshots", `{}`, "", 404, unknown},
		{"delete unknown snapshot", "DELETE", "/templates/nosuchsnapshot", "", "", 404, "not found"},
		{"get unknown", "GET", "/sandboxes/" + unknown, "", "", 404, unknown},
		{"kill unknown", "DELETE", "/sandboxes/" + unknown, "", "", 404, unknown},
		{"timeout unknown", "POST", "/sandboxes/" + unknown + "/timeout", `{"timeout":5}`, "", 404, unknown},
		{"timeout missing", "POST", "/sandboxes/" + unknown + "/timeout", `{}`, "", 400, "timeout is required"},
		{"connect unknown", "POST", "/v2/sandboxes/" + unknown + "/connect", `{"timeout":5}`, "", 404, unknown},
		{"connect v1 needs timeout", "POST", "/sandboxes/" + unknown + "/connect", `{}`, "", 400, "timeout is required"},
		{"pause unknown", "POST", "/sandboxes/" + unknown + "/pause", `{}`, "", 404, unknown},
		{"metrics unknown", "GET", "/sandboxes/" + unknown + "/metrics", "", "", 404, unknown},
		{"refresh too long", "POST", "/sandboxes/" + unknown + "/refreshes", `{"duration":4000}`, "", 400, "duration"},
		{"bad state filter", "GET", "/v2/sandboxes?state=dead", "", "", 400, "state"},
		{"bad limit", "GET", "/v2/sandboxes?limit=-3", "", "", 400, "limit"},
		{"bad next token", "GET", "/v2/sandboxes?nextToken=notatoken!", "", "", 400, "nextToken"},
		{"unknown route", "GET", "/nope", "", "", 404, "no route"},
		{"wrong method", "PUT", "/v2/sandboxes", `{}`, "", 405, "served with GET, POST"},
		{"wrong method on the dashboard", "POST", "/dashboard/", "", "-", 405, "served with GET"},
		{"unknown template alias", "GET", "/templates/aliases/nope", "", "", 404, "nope"},
		{"metrics start not a number", "GET", "/sandboxes/" + unknown + "/metrics?start=yesterday", "", "", 400, "start must be a unix time"},
		{"metrics end negative", "GET", "/sandboxes/" + unknown + "/metrics?end=-5", "", "", 400, "end must be a unix time"},
		{"metrics end in ms float", "GET", "/sandboxes/" + unknown + "/metrics?end=1.5", "", "", 400, "end must be a unix time"},
		{"metrics start after end", "GET", "/sandboxes/" + unknown + "/metrics?start=200&end=100", "", "", 400, "start (200) is after end (100)"},
		{"removed v1 build request", "POST", "/templates", `{"dockerfile":"FROM x"}`, "", 410, "POST /v3/templates"},
		{"removed v1 rebuild", "POST", "/templates/abc", `{}`, "", 410, "upgrade the E2B SDK"},
		{"removed v1 build start", "POST", "/templates/abc/builds/b1", ``, "", 410, "POST /templates/abc/builds/b1 was removed"},
		{"removed v2 build request", "POST", "/v2/templates", `{"alias":"x"}`, "", 410, "POST /v3/templates"},
		{"removed endpoint without a key", "POST", "/v2/templates", `{}`, "-", 410, "removed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := key
			if tc.key == "-" {
				k = ""
			} else if tc.key != "" {
				k = tc.key
			}
			resp := do(t, srv, tc.method, tc.path, tc.body, k)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tc.status, raw)
			}
			eb := checkErrorBody(t, raw, tc.status)
			if !strings.Contains(*eb.Message, tc.contains) {
				t.Fatalf("body = %s, want code %d and message containing %q", raw, tc.status, tc.contains)
			}
		})
	}
}

// TestHealthWaitsForReady: while warren prepares, health and the API
// answer 503; the server New returns answers for real.
func TestHealthWaitsForReady(t *testing.T) {
	t.Parallel()
	srv, key := newTestServer(t)
	starting := httptest.NewServer(Starting())
	defer starting.Close()
	tests := []struct {
		srv          *httptest.Server
		method, path string
		want         int
	}{
		{starting, "GET", "/health", 503},
		{starting, "GET", "/v2/sandboxes", 503},
		{starting, "GET", "/nope", 404},
		{starting, "POST", "/v2/templates", 410},
		{srv, "GET", "/health", 200},
		{srv, "GET", "/v2/sandboxes", 200},
	}
	for _, tc := range tests {
		resp := do(t, tc.srv, tc.method, tc.path, "", key)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
}

func TestListEmptyHasHeaders(t *testing.T) {
	t.Parallel()
	srv, key := newTestServer(t)
	resp := do(t, srv, "GET", "/v2/sandboxes", "", key)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(raw)) != "[]" {
		t.Fatalf("list = %d %s", resp.StatusCode, raw)
	}
	if resp.Header.Get("X-Total-Running") != "0" || resp.Header.Get("X-Next-Token") != "" {
		t.Fatalf("headers = %v", resp.Header)
	}
}

func do(t *testing.T, srv *httptest.Server, method, path, body, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func bigMap(n int) string {
	m := map[string]string{}
	for i := range n {
		m[strings.Repeat("k", 1+i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Every 429 and 503 carries Retry-After in whole seconds (JS 2.51 retries a
// 429 only then); a 503 promises that nothing changed.
func TestRetryAfterOnBusyAnswers(t *testing.T) {
	t.Parallel()
	starting := Starting()
	tests := []struct {
		name   string
		serve  func(w http.ResponseWriter, r *http.Request)
		status int
	}{
		{"health while starting", starting.ServeHTTP, 503},
		{"API while starting", func(w http.ResponseWriter, r *http.Request) {
			r.URL.Path = "/v2/sandboxes"
			starting.ServeHTTP(w, r)
		}, 503},
		{"unavailable", func(w http.ResponseWriter, r *http.Request) {
			fail(w, r, errdefs.New(errdefs.ErrUnavailable, "envd did not answer"))
		}, 503},
		{"host exhausted", func(w http.ResponseWriter, r *http.Request) {
			fail(w, r, fmt.Errorf("allocating an address: %w", errdefs.ErrResourceExhausted))
		}, 503},
		{"rate limited", func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusTooManyRequests, "slow down")
		}, 429},
		{"not found has none", func(w http.ResponseWriter, r *http.Request) {
			fail(w, r, errdefs.New(errdefs.ErrNotFound, "nope"))
		}, 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			tc.serve(rec, httptest.NewRequest("GET", "/health", nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			ra := rec.Header().Get("Retry-After")
			if tc.status != 429 && tc.status != 503 {
				if ra != "" {
					t.Fatalf("a %d with Retry-After %q", tc.status, ra)
				}
				return
			}
			if n, err := strconv.Atoi(ra); err != nil || n <= 0 {
				t.Fatalf("Retry-After = %q, want a positive whole number of seconds", ra)
			}
			checkErrorBody(t, rec.Body.Bytes(), tc.status)
		})
	}
}
