package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// errorCase is one request that must fail with status and error_code.
type errorCase struct {
	name, method, path, body string
	headers                  map[string]string // "" values are dropped; X-API-KEY is the server's key unless set
	status                   int
	code                     string
}

// TestErrorCodes: every family of errors a real `warren serve` answers
// (the REST API and its auth, the catch-all routes, body limits, host
// capacity, quotas, the sandbox traffic proxy, its traffic token and
// signed URLs) carries E2B's error body with the error_code of its
// class, and 429 and 503 carry Retry-After.
func TestErrorCodes(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[len(cfg.runtimes)-1]
	s := launchServer(t, cfg, serverOpts{index: 190, runtime: rt,
		args: []string{"--team-max-sandboxes", "1", "--max-memory", "100000000"}})
	// Before any sandbox runs, so that the team's quota (one sandbox)
	// is not what refuses it.
	t.Run("more memory than the host has", func(t *testing.T) {
		checkErrorCode(t, s, errorCase{"", "POST", "/v2/sandboxes", `{"templateID":"base","memoryMB":90000000}`, nil, 503, "sandbox_capacity_unavailable"})
	})
	t.Run("desktop without --desktop names the flag", func(t *testing.T) {
		checkErrorCode(t, s, errorCase{"", "POST", "/v2/sandboxes", `{"templateID":"desktop"}`, nil, 404, "not_found"})
		if _, body, _ := send(t, s, "POST", "/v2/sandboxes", `{"templateID":"desktop"}`, nil); !strings.Contains(string(body), "--desktop") {
			t.Errorf("create of desktop = %s, want the message to name --desktop", body)
		}
	})
	sb := createForErrors(t, s)
	noKey := map[string]string{"X-API-KEY": ""}
	traffic := func(port string, more ...string) map[string]string {
		h := map[string]string{"E2b-Sandbox-Id": sb.id, "E2b-Sandbox-Port": port, "X-API-KEY": ""}
		for i := 0; i+1 < len(more); i += 2 {
			h[more[i]] = more[i+1]
		}
		return h
	}
	cases := []errorCase{
		{"no key", "GET", "/v2/sandboxes", "", noKey, 401, "unauthenticated"},
		{"wrong key", "GET", "/v2/sandboxes", "", map[string]string{"X-API-KEY": "e2b_" + strings.Repeat("0", 40)}, 401, "unauthenticated"},
		{"unknown sandbox", "GET", "/sandboxes/doesnotexist0000", "", nil, 404, "not_found"},
		{"unknown route", "GET", "/no/such/route", "", nil, 404, "not_found"},
		{"malformed body", "POST", "/v2/sandboxes", `{"templateID":`, nil, 400, "invalid_argument"},
		{"body too large", "POST", "/v2/sandboxes", `{"templateID":"base","metadata":{"k":"` + strings.Repeat("x", 1<<20) + `"}}`, nil, 413, "too_large"},
		{"dashboard written to", "POST", "/dashboard/", "", noKey, 405, "method_not_allowed"},
		{"wrong method", "PUT", "/v2/sandboxes", `{}`, nil, 405, "method_not_allowed"},
		{"removed endpoint", "POST", "/v2/templates", `{}`, nil, 410, "gone"},
		{"resume a running sandbox", "POST", "/sandboxes/" + sb.id + "/resume", `{"timeout":60}`, nil, 409, "conflict"},
		{"over the team's quota", "POST", "/v2/sandboxes", `{"templateID":"base","timeout":30}`, nil, 429, "quota_exceeded"},
		{"proxy: unknown sandbox", "GET", "/", "", map[string]string{"E2b-Sandbox-Id": "doesnotexist0000", "E2b-Sandbox-Port": "8080", "X-API-KEY": ""}, 502, "sandbox_not_found"},
		{"proxy: bad port header", "GET", "/", "", traffic("x"), 400, "invalid_argument"},
		{"proxy: envd /init", "POST", "/init", `{}`, traffic("49983"), 403, "permission_denied"},
		{"proxy: no traffic token", "GET", "/", "", traffic("8080"), 403, "permission_denied"},
		{"proxy: closed port", "GET", "/", "", traffic("8080", "E2b-Traffic-Access-Token", sb.trafficToken), 502, "sandbox_port_not_open"},
		{"signed URL of nothing", "GET", "/files?path=a&signature=v1_x", "", noKey, 401, "unauthenticated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkErrorCode(t, s, tc) })
	}
}

// errSandbox is the sandbox TestErrorCodes makes: its traffic to ports
// other than envd's needs the token.
type errSandbox struct{ id, trafficToken string }

func createForErrors(t *testing.T, s *server) errSandbox {
	t.Helper()
	status, body, _ := send(t, s, "POST", "/v2/sandboxes", `{"templateID":"base","timeout":120,"network":{"allowPublicTraffic":false}}`, nil)
	var sb struct {
		SandboxID          string `json:"sandboxID"`
		TrafficAccessToken string `json:"trafficAccessToken"`
	}
	if err := json.Unmarshal(body, &sb); err != nil || status != http.StatusCreated || sb.TrafficAccessToken == "" {
		t.Fatalf("create = %d %s, want 201 with a traffic access token", status, body)
	}
	t.Cleanup(func() { send(t, s, "DELETE", "/sandboxes/"+sb.SandboxID, "", nil) })
	return errSandbox{sb.SandboxID, sb.TrafficAccessToken}
}

func checkErrorCode(t *testing.T, s *server, tc errorCase) {
	t.Helper()
	status, body, h := send(t, s, tc.method, tc.path, tc.body, tc.headers)
	var e struct {
		Code      *int    `json:"code"`
		ErrorCode *string `json:"error_code"`
		Message   string  `json:"message"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Code == nil || e.ErrorCode == nil || e.Message == "" {
		t.Fatalf("%s %s = %d %q, not E2B's error body with error_code", tc.method, tc.path, status, body)
	}
	if status != tc.status || *e.Code != tc.status || *e.ErrorCode != tc.code {
		t.Fatalf("%s %s = %d %s, want %d with error_code %q", tc.method, tc.path, status, body, tc.status, tc.code)
	}
	retry := h.Get("Retry-After")
	if n, err := strconv.Atoi(retry); (status == 429 || status == 503) != (err == nil && n > 0) {
		t.Errorf("status %d with Retry-After %q", status, retry)
	}
}

// send makes one request to s with the server's key unless headers set
// X-API-KEY ("" for none), and returns the status, body and headers.
func send(t *testing.T, s *server, method, path, body string, headers map[string]string) (int, []byte, http.Header) {
	t.Helper()
	// Not canceled with the test: cleanups send too.
	req, err := http.NewRequestWithContext(context.WithoutCancel(t.Context()), method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", s.apiKey)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Del(k)
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header
}
