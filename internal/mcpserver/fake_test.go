package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// fakePNG stands in for a plot: the tests only check that the bytes
// arrive as image content.
var fakePNG = []byte("\x89PNG\r\n\x1a\nfake")

// fakeWarren answers the REST routes the server uses and the code
// interpreter's /execute (sandbox traffic arrives through the sandbox URL,
// named by headers), recording creates, kills and renewals.
type fakeWarren struct {
	mu            sync.Mutex
	n             int
	live          map[string]bool
	created       []string
	killed        []string
	renewed       []string
	createStatus  int // answer creates with this status when non-zero
	timeoutStatus int // answer timeout renewals with this status when non-zero
	createDelay   time.Duration
	executed      []string // "<sandbox>: <code>"
}

func newFakeWarren(t *testing.T) (*fakeWarren, *warren.Client) {
	t.Helper()
	f := &fakeWarren{live: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/sandboxes", f.create)
	mux.HandleFunc("POST /v2/sandboxes/{id}/connect", f.connect)
	mux.HandleFunc("POST /sandboxes/{id}/timeout", f.timeout)
	mux.HandleFunc("DELETE /sandboxes/{id}", f.kill)
	mux.HandleFunc("POST /execute", f.execute)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	c, err := warren.New(warren.Config{APIURL: ts.URL, SandboxURL: ts.URL, APIKey: "e2b_test", Domain: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

func apiError(w http.ResponseWriter, status int, msg string) {
	reply(w, status, map[string]any{"code": status, "message": msg})
}

func sandboxJSON(id string) map[string]any {
	return map[string]any{"sandboxID": id, "templateID": "code-interpreter-v1", "clientID": "warren",
		"envdVersion": "0.2.0", "envdAccessToken": "tok", "trafficAccessToken": nil, "domain": "localhost"}
}

func (f *fakeWarren) create(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	status, delay := f.createStatus, f.createDelay
	f.mu.Unlock()
	time.Sleep(delay)
	if status != 0 {
		apiError(w, status, "over quota")
		return
	}
	f.mu.Lock()
	f.n++
	id := fmt.Sprintf("sb%d", f.n)
	f.live[id] = true
	f.created = append(f.created, id)
	f.mu.Unlock()
	reply(w, http.StatusCreated, sandboxJSON(id))
}

func (f *fakeWarren) connect(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	ok := f.live[id]
	f.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "sandbox "+id+" not found")
		return
	}
	reply(w, http.StatusOK, sandboxJSON(id))
}

func (f *fakeWarren) timeout(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timeoutStatus != 0 {
		apiError(w, f.timeoutStatus, "sandbox not found")
		return
	}
	f.renewed = append(f.renewed, r.PathValue("id"))
	reply(w, http.StatusNoContent, nil)
}

func (f *fakeWarren) kill(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.live[id] {
		apiError(w, http.StatusNotFound, "sandbox "+id+" not found")
		return
	}
	delete(f.live, id)
	f.killed = append(f.killed, id)
	reply(w, http.StatusNoContent, nil)
}

// execute answers every run with some stdout, the main result "2" and a
// PNG display result; code "raise" answers with an exception instead.
func (f *fakeWarren) execute(w http.ResponseWriter, r *http.Request) {
	var body struct{ Code string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	id := r.Header.Get("E2b-Sandbox-Id")
	f.mu.Lock()
	f.executed = append(f.executed, id+": "+body.Code)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	_ = enc.Encode(map[string]any{"type": "stdout", "text": "hello\n", "timestamp": time.Now().Format(time.RFC3339Nano)})
	if body.Code == "hang" {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	if body.Code == "raise" {
		_ = enc.Encode(map[string]any{"type": "error", "name": "ValueError", "value": "boom", "traceback": "Traceback: line 1"})
	} else {
		_ = enc.Encode(map[string]any{"type": "result", "text": "<Figure>", "png": base64.StdEncoding.EncodeToString(fakePNG)})
		_ = enc.Encode(map[string]any{"type": "result", "text": "2", "is_main_result": true})
	}
	_ = enc.Encode(map[string]any{"type": "end_of_execution"})
}

// snapshot returns copies of the records.
func (f *fakeWarren) snapshot() (created, killed, renewed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.created), slices.Clone(f.killed), slices.Clone(f.renewed)
}

func (f *fakeWarren) set(fn func(f *fakeWarren)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// newTestServer returns a server on a fake warren. It does not log: the
// SDK logs from goroutines that may outlive the test.
func newTestServer(t *testing.T, o Options) (*Server, *fakeWarren) {
	t.Helper()
	f, c := newFakeWarren(t)
	o.Logger = slog.New(slog.DiscardHandler)
	s := New(c, o)
	t.Cleanup(s.Close)
	return s, f
}

// connect opens a client session to s over an in-memory transport.
func connect(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and fails t on a protocol error (tool errors are
// results).
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// textOf joins a result's text items.
func textOf(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
