package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"
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
	// The two default contexts, then the two made here.
	if status != 200 || json.Unmarshal(b, &list) != nil || len(list) != 4 {
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
	if _, b := ts.do(t, http.MethodGet, "/contexts", nil); json.Unmarshal(b, &list) != nil || len(list) != 3 {
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

// TestDefaultContextsAtStart: as the reference server, a python and a
// javascript context exist from the start. A warm javascript kernel starts
// in the background and GET /contexts waits for it rather than leave it
// out; otherwise the context is listed at once and its kernel starts on
// first use. A context asked for meanwhile is listed after both.
func TestDefaultContextsAtStart(t *testing.T) {
	t.Parallel()
	for _, warm := range []bool{true, false} {
		t.Run(fmt.Sprintf("warm=%v", warm), func(t *testing.T) {
			t.Parallel()
			testDefaultContexts(t, warm)
		})
	}
}

func testDefaultContexts(t *testing.T, warm bool) {
	release := make(chan struct{})
	var args []string
	if warm {
		args = []string{"python", "javascript", "klingon"}
	}
	ts := newWarmTestServer(t, nil, func(o *Options) {
		start := o.Start
		o.Start = func(ctx context.Context, spec KernelSpec) (Kernel, error) {
			if spec.Argv[0] == "deno" {
				<-release
			}
			return start(ctx, spec)
		}
	}, args...)
	listed := make(chan []contextInfo)
	go func() {
		_, b := ts.do(t, http.MethodGet, "/contexts", nil)
		var list []contextInfo
		_ = json.Unmarshal(b, &list)
		listed <- list
	}()
	var list []contextInfo
	select {
	case list = <-listed:
		if warm {
			t.Fatalf("listed %v before the javascript kernel started", list)
		}
	case <-time.After(100 * time.Millisecond):
		if !warm {
			t.Fatal("GET /contexts waited for a kernel nobody asked for")
		}
	}
	if n := len(ts.starter.all()); n != 1 {
		t.Errorf("%d kernels started before any javascript ran, want 1", n)
	}
	close(release)
	if warm {
		list = <-listed
	}
	var langs []string
	for _, c := range list {
		langs = append(langs, c.Language+" "+c.Cwd)
	}
	if want := []string{"python /home/user", "javascript /home/user"}; !slices.Equal(langs, want) {
		t.Fatalf("at start: %v, want %v", langs, want)
	}
	_, b := ts.do(t, http.MethodPost, "/contexts", map[string]any{"language": "python"})
	var mine contextInfo
	if err := json.Unmarshal(b, &mine); err != nil {
		t.Fatal(err)
	}
	// The javascript default serves language "js" and its own id alike.
	ts.execute(t, map[string]any{"code": "1", "language": "js"})
	ts.execute(t, map[string]any{"code": "2", "context_id": list[1].ID})
	_, b = ts.do(t, http.MethodGet, "/contexts", nil)
	var after []contextInfo
	if err := json.Unmarshal(b, &after); err != nil {
		t.Fatal(err)
	}
	if len(after) != 3 || after[1].ID != list[1].ID || after[2].ID != mine.ID {
		t.Fatalf("after a create: %v", after)
	}
	kernels := ts.starter.all()
	if len(kernels) != 3 {
		t.Fatalf("%d kernels started, want 3 (two defaults and mine)", len(kernels))
	}
	js := kernels[1]
	if !warm {
		js = kernels[2] // started on first use, after mine
	}
	if got := js.userCodes(); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("javascript kernel ran %q", got)
	}
}

// TestDefaultPythonListedAfterFailedStart: a python kernel that misses its
// start budget at Prestart (a loaded host) leaves its default context
// listed first all the same, as the reference server lists it; the first
// execution starts its kernel, in that same context.
func TestDefaultPythonListedAfterFailedStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		failures int32 // python starts that fail before one succeeds
		atStart  int   // kernels running after Prestart
	}{
		{"started", 0, 1},
		{"start failed", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			ts, err := newPrestartedServer(t, nil, func(o *Options) {
				start := o.Start
				o.Start = func(ctx context.Context, spec KernelSpec) (Kernel, error) {
					if spec.Argv[0] == "python3" && calls.Add(1) <= tc.failures {
						return nil, errors.New("connecting to kernel: context deadline exceeded")
					}
					return start(ctx, spec)
				}
			})
			if (err != nil) != (tc.failures > 0) {
				t.Fatalf("Prestart: %v, with %d failed starts", err, tc.failures)
			}
			before := ts.listLanguages(t)
			if want := []string{"python", "javascript"}; !slices.Equal(before.langs, want) {
				t.Fatalf("listed %v, want %v", before.langs, want)
			}
			if n := len(ts.starter.all()); n != tc.atStart {
				t.Errorf("%d kernels after Prestart, want %d", n, tc.atStart)
			}
			for _, ev := range ts.execute(t, map[string]any{"code": "1"}) {
				if ev["type"] == "error" {
					t.Fatalf("first execution: %v", ev)
				}
			}
			if n := len(ts.starter.all()); n != 1 {
				t.Errorf("%d kernels after the first execution, want 1 (python)", n)
			}
			if after := ts.listLanguages(t); !slices.Equal(after.ids, before.ids) {
				t.Errorf("contexts %v after the first execution, want %v", after.ids, before.ids)
			}
		})
	}
}

type listed struct{ langs, ids []string }

// listLanguages is GET /contexts as languages and ids, in order.
func (ts *testServer) listLanguages(t *testing.T) listed {
	t.Helper()
	status, b := ts.do(t, http.MethodGet, "/contexts", nil)
	var list []contextInfo
	if err := json.Unmarshal(b, &list); status != http.StatusOK || err != nil {
		t.Fatalf("GET /contexts: %d %s (%v)", status, b, err)
	}
	var l listed
	for _, c := range list {
		l.langs = append(l.langs, c.Language)
		l.ids = append(l.ids, c.ID)
	}
	return l
}
