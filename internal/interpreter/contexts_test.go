package interpreter

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// newEnvd serves a fake envd /envs and returns its URL.
func newEnvd(t *testing.T, seen func(token string)) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r.Header.Get("X-Access-Token"))
		_ = json.NewEncoder(w).Encode(map[string]string{"FROM_ENVD": "yes"})
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/envs"
}

func (ts *testServer) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var resp *http.Response
	if method == http.MethodPost {
		resp = ts.post(t, t.Context(), path, body)
	} else {
		req, err := http.NewRequestWithContext(t.Context(), method, ts.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestContextsCRUD(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	status, b := ts.do(t, http.MethodPost, "/contexts", map[string]any{"language": "JS", "cwd": "/tmp"})
	var created contextInfo
	if status != 200 || json.Unmarshal(b, &created) != nil || created.Language != "javascript" || created.Cwd != "/tmp" || created.ID == "" {
		t.Fatalf("create = %d %s", status, b)
	}
	if got := ts.starter.all()[1].executed(); !slices.Equal(got, []string{jsChdir("/tmp")}) {
		t.Errorf("new kernel ran %q", got)
	}
	// A context created with {} is python in the default cwd.
	status, b = ts.do(t, http.MethodPost, "/contexts", map[string]any{})
	var py contextInfo
	if status != 200 || json.Unmarshal(b, &py) != nil || py.Language != "python" || py.Cwd != "/home/user" {
		t.Fatalf("create {} = %d %s", status, b)
	}
	// Executions go to the context asked for.
	ts.execute(t, map[string]any{"code": "in js", "context_id": created.ID})
	if got := ts.starter.all()[1].userCodes(); !slices.Equal(got, []string{"in js"}) {
		t.Errorf("js context ran %q", got)
	}

	status, b = ts.do(t, http.MethodGet, "/contexts", nil)
	var list []contextInfo
	if status != 200 || json.Unmarshal(b, &list) != nil || len(list) != 3 {
		t.Fatalf("list = %d %s", status, b)
	}
	for _, c := range list {
		if c.ID == defaultAlias {
			t.Errorf("list has the default alias: %s", b)
		}
	}

	for _, tc := range []struct {
		name, method, path string
		status             int
		body               string
	}{
		{"restart", http.MethodPost, "/contexts/" + created.ID + "/restart", 200, "null\n"},
		{"restart default", http.MethodPost, "/contexts/default/restart", 200, "null\n"},
		{"restart unknown", http.MethodPost, "/contexts/nope/restart", 404, "Context nope not found"},
		{"delete", http.MethodDelete, "/contexts/" + created.ID, 200, "null\n"},
		{"delete again", http.MethodDelete, "/contexts/" + created.ID, 404, "Context " + created.ID + " not found"},
		{"create unknown language", http.MethodPost, "/contexts", 400, `Language "cobol" is not supported; available languages: [bash javascript python typescript]`},
	} {
		body := any(map[string]any{})
		if tc.name == "create unknown language" {
			body = map[string]any{"language": "cobol"}
		}
		if status, b := ts.do(t, tc.method, tc.path, body); status != tc.status || string(b) != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.name, status, b, tc.status, tc.body)
		}
	}
	js := ts.starter.all()[1]
	if _, restarts, shutdowns := js.counts(); restarts != 1 || shutdowns != 1 {
		t.Errorf("js kernel restarts=%d shutdowns=%d", restarts, shutdowns)
	}
	// The restart moved the kernel back to the context's cwd.
	if got := js.executed(); !slices.Equal(got, []string{jsChdir("/tmp"), "in js", jsChdir("/tmp")}) {
		t.Errorf("js kernel ran %q", got)
	}
	if _, b := ts.do(t, http.MethodGet, "/contexts", nil); json.Unmarshal(b, &list) != nil || len(list) != 2 {
		t.Errorf("list after delete = %s", b)
	}
}

func TestDeleteDefaultRecreates(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	if status, b := ts.do(t, http.MethodDelete, "/contexts/default", nil); status != 200 {
		t.Fatalf("delete default = %d %s", status, b)
	}
	if got := types(ts.execute(t, map[string]any{"code": "x"})); got != "number_of_executions,stdout,end_of_execution" {
		t.Errorf("types = %s", got)
	}
	if n := len(ts.starter.all()); n != 2 {
		t.Errorf("kernels started = %d, want 2", n)
	}
}

// TestContextsListInCreationOrder: GET /contexts lists contexts in the
// order they were made (random ids sort any which way).
func TestContextsListInCreationOrder(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	var want []string
	for range 6 {
		_, b := ts.do(t, http.MethodPost, "/contexts", map[string]any{"language": "python"})
		var c contextInfo
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		want = append(want, c.ID)
	}
	_, b := ts.do(t, http.MethodGet, "/contexts", nil)
	var list []contextInfo
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		if slices.Contains(want, c.ID) {
			got = append(got, c.ID)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want creation order %v", got, want)
	}
}
