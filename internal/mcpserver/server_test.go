package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestTools: every tool is listed with a description and an input schema
// that says which arguments are required.
func TestTools(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	cs := connect(t, s)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"run_code": {"code"}, "run_command": {"command"}, "read_file": {"path"}, "write_file": {"path", "content"},
		"list_files": {"path"}, "create_sandbox": nil, "kill_sandbox": {"sandboxId"},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		req, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		schema, _ := tool.InputSchema.(map[string]any)
		var got []string
		for _, r := range asSlice(schema["required"]) {
			got = append(got, r.(string))
		}
		slices.Sort(got)
		slices.Sort(req)
		if tool.Description == "" || !slices.Equal(got, req) {
			t.Errorf("%s: description %q, required %v, want %v", tool.Name, tool.Description, got, req)
		}
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// TestSessionSandbox: a session's calls share one sandbox, created on the
// first; another session gets its own; a session's end kills its sandbox,
// and Close kills the rest and refuses new ones.
func TestSessionSandbox(t *testing.T) {
	s, f := newTestServer(t, Options{})
	a, b := connect(t, s), connect(t, s)
	if created, _, _ := f.snapshot(); len(created) != 0 {
		t.Fatalf("sandboxes created before any call: %v", created)
	}
	for range 2 {
		if res := call(t, a, "run_code", map[string]any{"code": "1+1"}); res.IsError {
			t.Fatalf("run_code: %s", textOf(res))
		}
	}
	if res := call(t, b, "run_code", map[string]any{"code": "1+1"}); res.IsError {
		t.Fatalf("run_code: %s", textOf(res))
	}
	if created, _, _ := f.snapshot(); !slices.Equal(created, []string{"sb1", "sb2"}) {
		t.Fatalf("created %v, want [sb1 sb2]", created)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitKilled(t, f, "sb1")
	s.Close()
	waitKilled(t, f, "sb1", "sb2")
	late := connect(t, s)
	if res := call(t, late, "run_code", map[string]any{"code": "1"}); !res.IsError || !strings.Contains(textOf(res), "shutting down") {
		t.Errorf("a call after Close = %v %q", res.IsError, textOf(res))
	}
}

// waitKilled waits until the fake has seen exactly the kills of ids.
func waitKilled(t *testing.T, f *fakeWarren, ids ...string) {
	t.Helper()
	err := testutil.Poll(5*time.Second, 10*time.Millisecond, func() error {
		if _, killed, _ := f.snapshot(); !slices.Equal(killed, ids) {
			return fmt.Errorf("killed %v, want %v", killed, ids)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentFirstCalls: calls racing to be a session's first create
// one sandbox between them.
func TestConcurrentFirstCalls(t *testing.T) {
	s, f := newTestServer(t, Options{})
	f.set(func(f *fakeWarren) { f.createDelay = 50 * time.Millisecond })
	cs := connect(t, s)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "1"}}); err != nil || res.IsError {
				t.Errorf("run_code: %v %v", err, res)
			}
		})
	}
	wg.Wait()
	if created, _, _ := f.snapshot(); len(created) != 1 {
		t.Errorf("created %v, want one sandbox", created)
	}
}

// TestSessionEndsDuringCreate: a session that ends while its sandbox is
// being created still has that sandbox killed.
func TestSessionEndsDuringCreate(t *testing.T) {
	s, f := newTestServer(t, Options{})
	f.set(func(f *fakeWarren) { f.createDelay = 300 * time.Millisecond })
	cs := connect(t, s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "1"}})
	}()
	time.Sleep(100 * time.Millisecond)
	_ = cs.Close()
	<-done
	waitKilled(t, f, "sb1")
}

// TestServeCancelled: cancelling Serve's context (SIGTERM) ends it while a
// call is still running, and kills the session's sandbox.
func TestServeCancelled(t *testing.T) {
	s, f := newTestServer(t, Options{})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go func() {
		_, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "hang"}})
	}()
	if err := testutil.Poll(5*time.Second, 10*time.Millisecond, func() error {
		if created, _, _ := f.snapshot(); len(created) == 0 {
			return errors.New("no sandbox yet")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the run start
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still running 10s after its context was cancelled")
	}
	waitKilled(t, f, "sb1")
}

// TestCreateFailure: a failed create is a tool error that says why, and
// the next call tries again.
func TestCreateFailure(t *testing.T) {
	s, f := newTestServer(t, Options{Template: "tpl"})
	f.set(func(f *fakeWarren) { f.createStatus = 429 })
	cs := connect(t, s)
	res := call(t, cs, "run_command", map[string]any{"command": "echo hi"})
	if msg := textOf(res); !res.IsError || !strings.Contains(msg, `creating the session's sandbox from template "tpl"`) || !strings.Contains(msg, "over quota") {
		t.Errorf("run_command with creates failing = %v %q", res.IsError, msg)
	}
	f.set(func(f *fakeWarren) { f.createStatus = 0 })
	if res := call(t, cs, "run_code", map[string]any{"code": "1"}); res.IsError {
		t.Errorf("run_code after creates recovered: %s", textOf(res))
	}
}

// TestKillSessionSandbox: kill_sandbox on the session's own sandbox makes
// the next call create another, and the session's end kills only that.
func TestKillSessionSandbox(t *testing.T) {
	s, f := newTestServer(t, Options{})
	cs := connect(t, s)
	call(t, cs, "run_code", map[string]any{"code": "1"})
	if res := call(t, cs, "kill_sandbox", map[string]any{"sandboxId": "sb1"}); res.IsError {
		t.Fatalf("kill_sandbox: %s", textOf(res))
	}
	call(t, cs, "run_code", map[string]any{"code": "1"})
	_ = cs.Close()
	waitKilled(t, f, "sb1", "sb2")
}

// TestExplicitSandbox: create_sandbox's sandbox is used through sandboxId,
// is not the session's, and outlives the session.
func TestExplicitSandbox(t *testing.T) {
	s, f := newTestServer(t, Options{})
	cs := connect(t, s)
	res := call(t, cs, "create_sandbox", map[string]any{"timeout": 60, "metadata": map[string]any{"k": "v"}})
	out, _ := res.StructuredContent.(map[string]any)
	if res.IsError || out["sandboxId"] != "sb1" {
		t.Fatalf("create_sandbox = %s %v", textOf(res), res.StructuredContent)
	}
	if res := call(t, cs, "run_code", map[string]any{"code": "x", "sandboxId": "sb1"}); res.IsError {
		t.Fatalf("run_code in sb1: %s", textOf(res))
	}
	if created, _, _ := f.snapshot(); len(created) != 1 {
		t.Errorf("created %v: a call with a sandboxId created a session sandbox", created)
	}
	f.set(func(f *fakeWarren) {
		if !slices.Equal(f.executed, []string{"sb1: x"}) {
			t.Errorf("executed %v", f.executed)
		}
	})
	_ = cs.Close()
	s.Close()
	if _, killed, _ := f.snapshot(); len(killed) != 0 {
		t.Errorf("killed %v: an explicit sandbox died with the session", killed)
	}
}

// TestRenew: a session's sandbox is renewed once half its timeout has
// passed, and replaced if it has ended meanwhile.
func TestRenew(t *testing.T) {
	s, f := newTestServer(t, Options{SandboxTimeout: time.Second})
	cs := connect(t, s)
	call(t, cs, "run_code", map[string]any{"code": "1"})
	call(t, cs, "run_code", map[string]any{"code": "1"})
	if _, _, renewed := f.snapshot(); len(renewed) != 0 {
		t.Fatalf("renewed %v with most of the timeout left", renewed)
	}
	time.Sleep(600 * time.Millisecond)
	call(t, cs, "run_code", map[string]any{"code": "1"})
	if created, _, renewed := f.snapshot(); len(created) != 1 || !slices.Equal(renewed, []string{"sb1"}) {
		t.Fatalf("created %v, renewed %v; want one sandbox renewed once", created, renewed)
	}
	f.set(func(f *fakeWarren) { f.timeoutStatus = 404 })
	time.Sleep(600 * time.Millisecond)
	if res := call(t, cs, "run_code", map[string]any{"code": "1"}); res.IsError {
		t.Fatalf("run_code after the sandbox ended: %s", textOf(res))
	}
	if created, _, _ := f.snapshot(); !slices.Equal(created, []string{"sb1", "sb2"}) {
		t.Errorf("created %v, want a replacement", created)
	}
}

// TestRunCodeResult: the text summary, the structured output and the
// plot as image content.
func TestRunCodeResult(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	cs := connect(t, s)
	res := call(t, cs, "run_code", map[string]any{"code": "1+1"})
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("run_code = %v, %d items: %s", res.IsError, len(res.Content), textOf(res))
	}
	if txt := textOf(res); !strings.Contains(txt, "[result]\n2") || !strings.Contains(txt, "[stdout]\nhello") {
		t.Errorf("text %q", txt)
	}
	img, ok := res.Content[1].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, fakePNG) {
		t.Errorf("second item %#v, want the PNG", res.Content[1])
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out["stdout"] != "hello\n" || out["images"] != 1.0 || len(asSlice(out["results"])) != 2 {
		t.Errorf("structured %v", out)
	}
	res = call(t, cs, "run_code", map[string]any{"code": "raise"})
	if txt := textOf(res); res.IsError || !strings.Contains(txt, "[error]\nValueError: boom\nTraceback: line 1") {
		t.Errorf("an exception: %v %q", res.IsError, txt)
	}
}

// TestArgumentErrors: bad arguments are tool errors that name the
// problem, found before any sandbox is made.
func TestArgumentErrors(t *testing.T) {
	s, f := newTestServer(t, Options{})
	cs := connect(t, s)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"run_code", map[string]any{}, "code"},
		{"run_code", map[string]any{"code": "  "}, "code is empty"},
		{"run_code", map[string]any{"code": "1", "timeout": -1}, "timeout -1 is out of range"},
		{"run_command", map[string]any{"command": ""}, "command is empty"},
		{"run_command", map[string]any{"command": "ls", "timeout": 100000}, "timeout 100000 is out of range"},
		{"run_command", map[string]any{"command": "ls", "user": "admin"}, `user "admin" is not one of user, root`},
		{"run_command", map[string]any{"command": "ls", "timeout": "soon"}, "timeout"},
		{"write_file", map[string]any{"path": "/a", "content": "x", "encoding": "hex"}, `encoding "hex"`},
		{"write_file", map[string]any{"path": "/a", "content": "!!", "encoding": "base64"}, "not valid base64"},
		{"write_file", map[string]any{"path": "", "content": "x"}, "path is empty"},
		{"read_file", map[string]any{"path": ""}, "path is empty"},
		{"list_files", map[string]any{"path": "/", "depth": -1}, "depth -1 is negative"},
		{"create_sandbox", map[string]any{"timeout": 10 * 24 * 3600}, "timeout 864000 is out of range"},
		{"kill_sandbox", map[string]any{"sandboxId": ""}, "sandboxId is empty"},
		{"kill_sandbox", map[string]any{"sandboxId": "nope"}, "sandbox nope does not exist"},
		{"run_code", map[string]any{"code": "1", "sandboxId": "nope"}, "connecting to sandbox nope"},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if msg := textOf(res); !res.IsError || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v = %v %q, want an error with %q", tc.tool, tc.args, res.IsError, msg, tc.want)
		}
	}
	if created, _, _ := f.snapshot(); len(created) != 0 {
		t.Errorf("created %v for bad arguments", created)
	}
}
