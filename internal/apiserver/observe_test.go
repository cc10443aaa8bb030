package apiserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
)

// getBearer sends GET path with the key in the Authorization header.
func getBearer(t *testing.T, f *routeFixture, path, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestMetricsBearer: /metrics takes the admin key as a bearer token too,
// and refuses a team's key however it is sent.
func TestMetricsBearer(t *testing.T) {
	t.Parallel()
	f := newRouteFixture(t)
	admin := f.addKey(t, apikey.Spec{Name: "admin", Admin: true})
	tests := []struct {
		name, key string
		status    int
		contains  string
	}{
		{"admin", admin, 200, "go_goroutines"},
		{"team key", f.key, 403, "only the admin key"},
		{"unknown key", "e2b_" + strings.Repeat("0", 40), 401, "invalid API key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := getBearer(t, f, "/metrics", tt.key)
			if status != tt.status || !strings.Contains(body, tt.contains) {
				t.Fatalf("GET /metrics with Bearer = %d %.300s, want %d with %q", status, body, tt.status, tt.contains)
			}
		})
	}
}

// TestRequestSeriesUseRoutePatterns: requests are counted by the pattern
// that served them, never by their path, so sandbox ids make no series.
func TestRequestSeriesUseRoutePatterns(t *testing.T) {
	t.Parallel()
	f := newRouteFixture(t)
	admin := f.addKey(t, apikey.Spec{Name: "admin", Admin: true})
	for _, p := range []string{"/sandboxes/aaaaaaaaaaaaaaaaaaaa", "/sandboxes/bbbbbbbbbbbbbbbbbbbb", "/no/such/route", "/health"} {
		resp := do(t, f.srv, "GET", p, "", f.key)
		resp.Body.Close()
	}
	resp := do(t, f.srv, "POST", "/sandboxes", `{"templateID":"base","timeout":60}`, f.key)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	_, body := getBearer(t, f, "/metrics", admin)
	for _, want := range []string{
		`warren_http_requests_total{code="404",route="GET /sandboxes/{id}"} 2`,
		`warren_http_requests_total{code="404",route="other"} 1`,
		`warren_http_requests_total{code="200",route="GET /health"} 1`,
		`warren_http_requests_total{code="201",route="POST /sandboxes"} 1`,
		`warren_http_request_duration_seconds_count{route="GET /sandboxes/{id}"} 2`,
		`warren_sandbox_create_duration_seconds_count{outcome="success",runtime="fake"} 1`,
		`warren_sandboxes{runtime="fake",state="running",team="default",template="base"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%s", want, grepWarren(body))
		}
	}
	for _, leak := range []string{"aaaaaaaaaaaaaaaaaaaa", "/no/such/route"} {
		if strings.Contains(body, leak) {
			t.Errorf("the raw path %s became a label", leak)
		}
	}
}

// grepWarren keeps warren's own lines, for readable failures.
func grepWarren(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "warren_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestBuildSeries: a build that finishes and one cancelled are counted by
// result, with their durations.
func TestBuildSeries(t *testing.T) {
	t.Parallel()
	f := newRouteFixture(t)
	admin := f.addKey(t, apikey.Spec{Name: "admin", Admin: true})
	start := func(name, steps string) (tpl, build string) {
		t.Helper()
		vars := map[string]string{}
		resp := do(t, f.srv, "POST", "/v3/templates", `{"name":"`+name+`"}`, f.key)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		saveBuild(vars, raw)
		resp = do(t, f.srv, "POST", "/v2/templates/"+vars["tpl"]+"/builds/"+vars["build"], `{"fromTemplate":"base","steps":`+steps+`}`, f.key)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("starting build %s: %d", name, resp.StatusCode)
		}
		return vars["tpl"], vars["build"]
	}
	start("obs-ready", `[]`)
	tpl, build := start("obs-cancel", `[{"type":"RUN","args":["sleep 1000"]}]`)
	resp := do(t, f.srv, "POST", "/templates/"+tpl+"/builds/"+build+"/cancel", "", f.key)
	resp.Body.Close()
	wants := []string{
		`warren_template_builds_total{result="ready"} 1`,
		`warren_template_builds_total{result="cancelled"} 1`,
		`warren_template_build_duration_seconds_count{result="ready"} 1`,
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := getBearer(t, f, "/metrics", admin)
		missing := ""
		for _, w := range wants {
			if !strings.Contains(body, w) {
				missing = w
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in\n%s", missing, grepWarren(body))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStatusWriter: the status is the final answer's, not an
// informational one before it, nor a later WriteHeader.
func TestStatusWriter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		codes []int
		write bool
		want  int
	}{
		{"nothing", nil, false, http.StatusOK},
		{"body only", nil, true, http.StatusOK},
		{"created", []int{http.StatusCreated}, false, http.StatusCreated},
		{"continue then created", []int{http.StatusContinue, http.StatusCreated}, false, http.StatusCreated},
		{"early hints then body", []int{http.StatusEarlyHints}, true, http.StatusOK},
		{"first final wins", []int{http.StatusNotImplemented, http.StatusOK}, false, http.StatusNotImplemented},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &StatusWriter{ResponseWriter: httptest.NewRecorder()}
			for _, c := range tc.codes {
				w.WriteHeader(c)
			}
			if tc.write {
				_, _ = w.Write([]byte("x"))
			}
			if got := w.Status(); got != tc.want {
				t.Fatalf("Status() = %d, want %d", got, tc.want)
			}
		})
	}
}
