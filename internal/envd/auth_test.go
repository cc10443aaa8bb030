package envd_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

const unauthorizedBody = `{"code":401,"message":"unauthorized access, please provide a valid access token or method signing if supported"}`

// do sends a request to e and returns status, body and headers.
func do(t *testing.T, e *envdtest.Env, method, path string, body io.Reader, headers map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.HTTP.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func initEnvd(t *testing.T, e *envdtest.Env, body string, headers map[string]string) {
	t.Helper()
	if code, b, _ := do(t, e, http.MethodPost, "/init", strings.NewReader(body), headers); code != http.StatusNoContent {
		t.Fatalf("/init = %d %s", code, b)
	}
}

func TestTokenAuth(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	initEnvd(t, e, `{"accessToken":"secret","envVars":{"A":"1"}}`, nil)
	rpcBody := `{}`
	rpcHeaders := func(token string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "Connect-Protocol-Version": "1"}
		if token != "" {
			h["X-Access-Token"] = token
		}
		return h
	}
	tests := []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		status  int
	}{
		{"health is exempt", http.MethodGet, "/health", nil, http.StatusNoContent},
		{"envs without token", http.MethodGet, "/envs", nil, http.StatusUnauthorized},
		{"envs with wrong token", http.MethodGet, "/envs", map[string]string{"X-Access-Token": "nope"}, http.StatusUnauthorized},
		{"envs with token", http.MethodGet, "/envs", map[string]string{"X-Access-Token": "secret"}, http.StatusOK},
		{"metrics without token", http.MethodGet, "/metrics", nil, http.StatusUnauthorized},
		{"rpc without token", http.MethodPost, "/process.Process/List", rpcHeaders(""), http.StatusUnauthorized},
		{"rpc with token", http.MethodPost, "/process.Process/List", rpcHeaders("secret"), http.StatusOK},
		{"files without token or signature", http.MethodGet, "/files?path=/etc/hostname", nil, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if tt.method == http.MethodPost {
				body = strings.NewReader(rpcBody)
			}
			code, got, _ := do(t, e, tt.method, tt.path, body, tt.headers)
			if code != tt.status {
				t.Fatalf("status = %d (%s), want %d", code, got, tt.status)
			}
			if code == http.StatusUnauthorized && got != unauthorizedBody {
				t.Errorf("body = %s, want %s", got, unauthorizedBody)
			}
		})
	}

	// The connect client maps the 401 to unauthenticated.
	_, err := e.ProcessClient().List(t.Context(), connect.NewRequest(&pb.ListRequest{}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("connect client without token: %v", err)
	}
}

func TestInit(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	tok := map[string]string{"X-Access-Token": "t1"}
	initEnvd(t, e, `{"accessToken":"t1","envVars":{"A":"1","B":"2"},"defaultWorkdir":"/tmp","timestamp":"2026-01-02T03:04:05Z","lifecycleID":"x"}`, nil)

	// A later /init without a token keeps the old one and merges env vars.
	initEnvd(t, e, `{"envVars":{"B":"3","C":"4"}}`, nil)
	code, body, _ := do(t, e, http.MethodGet, "/envs", nil, tok)
	var envs map[string]string
	if err := json.Unmarshal([]byte(body), &envs); code != http.StatusOK || err != nil {
		t.Fatalf("/envs = %d %s", code, body)
	}
	if envs["A"] != "1" || envs["B"] != "3" || envs["C"] != "4" {
		t.Errorf("envs = %v", envs)
	}
	if got := e.Server.State().DefaultWorkdir(); got != "/tmp" {
		t.Errorf("default workdir = %q", got)
	}

	// A new token replaces the old one.
	initEnvd(t, e, `{"accessToken":"t2"}`, nil)
	if code, _, _ := do(t, e, http.MethodGet, "/envs", nil, tok); code != http.StatusUnauthorized {
		t.Errorf("old token still works: %d", code)
	}
	if code, _, _ := do(t, e, http.MethodGet, "/envs", nil, map[string]string{"X-Access-Token": "t2"}); code != http.StatusOK {
		t.Errorf("new token rejected: %d", code)
	}

	// Default user: must exist; then it is who requests run as.
	bad := []string{`{"defaultUser":"nobody-here"}`, `{"envVars":`, `{"envVars":{"A":1}}`}
	for _, b := range bad {
		if code, got, _ := do(t, e, http.MethodPost, "/init", strings.NewReader(b), nil); code != http.StatusBadRequest || !strings.Contains(got, `"code":400`) {
			t.Errorf("/init %s = %d %s", b, code, got)
		}
	}
	initEnvd(t, e, `{"defaultUser":"`+envdtest.SBUser+`"}`, nil)
	if got := e.Server.State().DefaultUserName(); got != envdtest.SBUser {
		t.Errorf("default user = %q", got)
	}
	initEnvd(t, e, ``, nil) // an empty body changes nothing
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	code, body, _ := do(t, e, http.MethodGet, "/metrics", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d %s", code, body)
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ts", "cpu_count", "mem_total", "mem_used", "mem_total_mib", "disk_total", "disk_used"} {
		if m[k] <= 0 {
			t.Errorf("%s = %v", k, m[k])
		}
	}
	for _, k := range []string{"cpu_used_pct", "mem_cache", "mem_used_mib"} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s missing", k)
		}
	}
	if m["cpu_used_pct"] < 0 || m["cpu_used_pct"] > 100 || m["mem_used"] > m["mem_total"] || m["disk_used"] > m["disk_total"] {
		t.Errorf("implausible metrics %v", m)
	}
}

func TestCORSAndNotFound(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	initEnvd(t, e, `{"accessToken":"secret"}`, nil)
	code, _, h := do(t, e, http.MethodOptions, "/process.Process/Start", nil, map[string]string{
		"Origin": "https://example.test", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization,x-access-token,content-type",
	})
	if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
		h.Get("Access-Control-Allow-Headers") != "authorization,x-access-token,content-type" {
		t.Errorf("preflight = %d %v", code, h)
	}
	code, body, h := do(t, e, http.MethodGet, "/nope", nil, map[string]string{"X-Access-Token": "secret"})
	if code != http.StatusNotFound || body != `{"code":404,"message":"no such endpoint: GET /nope"}` || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("unknown path = %d %s", code, body)
	}
}

// TestZeroTimeoutMeansNone sends Connect-Timeout-Ms: 0, which the protocol
// defines as no deadline.
func TestZeroTimeoutMeansNone(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	code, body, _ := do(t, e, http.MethodPost, "/process.Process/List", strings.NewReader(`{}`), map[string]string{
		"Content-Type": "application/json", "Connect-Protocol-Version": "1", "Connect-Timeout-Ms": "0",
	})
	if code != http.StatusOK {
		t.Errorf("= %d %s", code, body)
	}
}
