package warren

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestConfigFromEnvironment: what Config leaves empty comes from E2B's
// variables, then the defaults; no key is an error.
func TestConfigFromEnvironment(t *testing.T) {
	t.Setenv("E2B_API_KEY", "e2b_env")
	t.Setenv("E2B_DOMAIN", "example.test")
	t.Setenv("E2B_API_URL", "")
	t.Setenv("E2B_SANDBOX_URL", "http://127.0.0.1:9/")
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Config()
	if got.APIKey != "e2b_env" || got.APIURL != "https://api.example.test" || got.SandboxURL != "http://127.0.0.1:9/" || got.Domain != "example.test" {
		t.Errorf("config %+v", got)
	}
	if c, _ := New(Config{APIKey: "e2b_mine", APIURL: "http://h:1/"}); c.Config().APIKey != "e2b_mine" || c.Config().APIURL != "http://h:1" {
		t.Errorf("explicit config not kept: %+v", c.Config())
	}
	t.Setenv("E2B_API_KEY", "")
	if _, err := New(Config{}); err == nil {
		t.Error("New with no key succeeded")
	}
}

// fakeServer answers the few routes the tests use, as warren does.
func fakeServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("POST /v2/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body["templateID"] != "base" || body["timeout"] != 60.0 || body["allow_internet_access"] != false ||
			body["cpuCount"] != 2.0 || body["metadata"].(map[string]any)["k"] != "v" {
			reply(w, 400, map[string]any{"code": 400, "message": fmt.Sprint("unexpected body ", body)})
			return
		}
		reply(w, 201, map[string]any{"sandboxID": "sb1", "templateID": "tpl", "clientID": "warren", "envdVersion": "0.2.0",
			"envdAccessToken": "tok", "trafficAccessToken": nil, "domain": "localhost"})
	})
	mux.HandleFunc("GET /v2/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("metadata") != "k=v" || r.URL.Query().Get("limit") != "1" {
			reply(w, 400, map[string]any{"code": 400, "message": "unexpected query " + r.URL.RawQuery})
			return
		}
		w.Header().Set("X-Next-Token", "next")
		reply(w, 200, []map[string]any{{"sandboxID": "sb1", "templateID": "tpl", "clientID": "warren", "envdVersion": "0.2.0",
			"startedAt": time.Now(), "endAt": time.Now(), "cpuCount": 1, "memoryMB": 512, "diskSizeMB": 1024,
			"state": "running", "metadata": map[string]string{"k": "v"}}})
	})
	for status, path := range map[int]string{400: "bad", 401: "nokey", 404: "gone", 409: "busy", 429: "quota", 503: "starting", 500: "broken"} {
		mux.HandleFunc("DELETE /sandboxes/"+path, func(w http.ResponseWriter, r *http.Request) {
			reply(w, status, map[string]any{"code": status, "error_code": "code_" + path, "message": "sandbox " + path})
		})
	}
	mux.HandleFunc("DELETE /sandboxes/sb1", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-KEY") != "e2b_test" {
			reply(w, 401, map[string]any{"code": 401, "message": "missing API key"})
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSandboxCalls(t *testing.T) {
	srv := fakeServer(t)
	c, err := New(Config{APIURL: srv.URL, APIKey: "e2b_test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sb, err := c.Create(ctx, "base", CreateOptions{Timeout: time.Minute, Metadata: map[string]string{"k": "v"}, NoInternet: true, CPUCount: 2})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if sb.ID != "sb1" || sb.EnvdAccessToken != "tok" || sb.Domain != "localhost" || sb.Host(8080) != "8080-sb1.localhost" {
		t.Errorf("sandbox %+v", sb)
	}
	list, next, err := c.List(ctx, ListOptions{Metadata: map[string]string{"k": "v"}, Limit: 1})
	if err != nil || len(list) != 1 || list[0].ID != "sb1" || list[0].State != "running" || next != "next" {
		t.Errorf("List = %+v, %q, %v", list, next, err)
	}
	if err := sb.Kill(ctx); err != nil {
		t.Errorf("Kill: %v", err)
	}
}

// TestErrors: an error answer is an *APIError with the server's message
// and error_code that errors.Is classifies by status.
func TestErrors(t *testing.T) {
	srv := fakeServer(t)
	c, err := New(Config{APIURL: srv.URL, APIKey: "e2b_test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want error
	}{
		{"bad", ErrInvalid}, {"nokey", ErrUnauthorized}, {"gone", ErrNotFound}, {"busy", ErrConflict},
		{"quota", ErrRateLimited}, {"starting", ErrUnavailable}, {"broken", ErrServer},
	} {
		err := c.Kill(context.Background(), tc.id)
		var apiErr *APIError
		if !errors.Is(err, tc.want) || !errors.As(err, &apiErr) || apiErr.Message != "sandbox "+tc.id || apiErr.Code != "code_"+tc.id {
			t.Errorf("Kill(%s) = %#v, want %v with the server's message and error_code", tc.id, err, tc.want)
		}
		if errors.Is(err, ErrNotFound) != (tc.want == ErrNotFound) {
			t.Errorf("Kill(%s) = %v: misclassified as not found", tc.id, err)
		}
	}
	bad, _ := New(Config{APIURL: srv.URL, APIKey: "e2b_wrong"})
	if _, err := bad.Create(context.Background(), "base", CreateOptions{}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("a wrong key: %v, want ErrUnauthorized", err)
	}
}
