package interpreter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// testServer is a Server on fake kernels behind httptest.
type testServer struct {
	*Server
	url     string
	starter *fakeStarter
}

func newTestServer(t *testing.T, s script, mod func(*Options)) *testServer {
	t.Helper()
	return newWarmTestServer(t, s, mod)
}

// newWarmTestServer starts the server with these warm default contexts.
func newWarmTestServer(t *testing.T, s script, mod func(*Options), warm ...string) *testServer {
	t.Helper()
	ts, err := newPrestartedServer(t, s, mod, warm...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// newPrestartedServer is newWarmTestServer returning Prestart's error
// instead of failing on it; the server serves either way.
func newPrestartedServer(t *testing.T, s script, mod func(*Options), warm ...string) (*testServer, error) {
	t.Helper()
	if s == nil {
		s = defaultScript
	}
	f := &fakeStarter{script: s}
	opts := Options{
		Kernels: map[string]KernelConfig{
			"python":     {Argv: []string{"python3"}},
			"javascript": {Argv: []string{"deno"}},
			"bash":       {Argv: []string{"bash_kernel"}},
		},
		Start:             f.start,
		KeepaliveInterval: time.Hour,
		InterruptGrace:    2 * time.Second,
		DeathGrace:        50 * time.Millisecond,
	}
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	perr := srv.Prestart(t.Context(), warm...)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		srv.Close(context.Background())
	})
	return &testServer{Server: srv, url: hs.URL, starter: f}, perr
}

func (ts *testServer) post(t *testing.T, ctx context.Context, path string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Access-Token", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// execute runs code and returns the stream's events, checking the rules
// every stream must follow (spec §4.3).
func (ts *testServer) execute(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	resp := ts.post(t, t.Context(), "/execute", body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parseStream(t, raw)
}

func parseStream(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	if !bytes.HasSuffix(raw, []byte("\n")) {
		t.Errorf("stream does not end with a newline: %q", raw)
	}
	var events []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			t.Fatalf("blank line in stream: %q", raw)
		}
		if !utf8.Valid(line) {
			t.Errorf("line is not UTF-8: %q", line)
		}
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if typ := ev["type"]; typ == evStdout || typ == evStderr {
			if ts, _ := ev["timestamp"].(string); ts == "" {
				t.Errorf("%s line without timestamp: %s", typ, line)
			} else if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				t.Errorf("timestamp %q: %v", ts, err)
			}
		}
		events = append(events, ev)
	}
	if len(events) == 0 || events[len(events)-1]["type"] != evEndOfExec {
		t.Errorf("last line is not end_of_execution: %q", raw)
	}
	return events
}

func types(events []map[string]any) string {
	var out []string
	for _, ev := range events {
		out = append(out, ev["type"].(string))
	}
	return strings.Join(out, ",")
}

func ofType(events []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range events {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// eventually polls cond until it holds or the test times out.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
