package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/jupyter"
)

// scripted returns a script that emits msgs then replies r.
func scripted(r *jupyter.Message, msgs ...*jupyter.Message) script {
	return func(_ context.Context, _ *fakeKernel, _ string, emit func(*jupyter.Message)) (*jupyter.Message, error) {
		for _, m := range msgs {
			emit(m)
		}
		return r, nil
	}
}

func rawMsg(typ, content string) *jupyter.Message {
	m := msg(typ, nil)
	m.Content = json.RawMessage(content)
	return m
}

func TestExecuteStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script script
		types  string
		check  func(t *testing.T, events []map[string]any)
	}{{
		name: "stdout and main result",
		script: scripted(reply("ok"),
			msg("execute_input", map[string]any{"execution_count": 3}),
			msg("stream", map[string]any{"name": "stdout", "text": "hi\n"}),
			msg("execute_result", map[string]any{"data": map[string]any{"text/plain": "2"}})),
		types: "number_of_executions,stdout,result,end_of_execution",
		check: func(t *testing.T, ev []map[string]any) {
			if ev[0]["execution_count"] != 3.0 {
				t.Errorf("execution_count = %v", ev[0]["execution_count"])
			}
			if ev[1]["text"] != "hi\n" || ev[1]["timestamp"] != "2024-01-02T03:04:05.000006Z" {
				t.Errorf("stdout = %v", ev[1])
			}
			if ev[2]["text"] != "2" || ev[2]["is_main_result"] != true {
				t.Errorf("result = %v", ev[2])
			}
		},
	}, {
		name: "syntax error is one error line",
		script: scripted(errorReply("SyntaxError", "invalid syntax"),
			msg("error", map[string]any{"ename": "SyntaxError", "evalue": "invalid syntax", "traceback": []string{"  File x", "SyntaxError: invalid syntax"}})),
		types: "error,end_of_execution",
		check: func(t *testing.T, ev []map[string]any) {
			if ev[0]["name"] != "SyntaxError" || ev[0]["value"] != "invalid syntax" || ev[0]["traceback"] != "  File x\nSyntaxError: invalid syntax" {
				t.Errorf("error = %v", ev[0])
			}
		},
	}, {
		name:   "error only in the reply",
		script: scripted(errorReply("ValueError", "bad")),
		types:  "error,end_of_execution",
		check: func(t *testing.T, ev []map[string]any) {
			if ev[0]["name"] != "ValueError" || ev[0]["traceback"] != "tb" {
				t.Errorf("error = %v", ev[0])
			}
		},
	}, {
		name:   "aborted request",
		script: scripted(reply("aborted")),
		types:  "error,end_of_execution",
	}, {
		name: "display data with extra MIME types",
		script: scripted(reply("ok"),
			msg("display_data", map[string]any{"data": map[string]any{
				"text/plain": "'df'", "text/html": "<b>x</b>", "image/png": "iVBOR",
				"application/vnd.custom+json": map[string]any{"a": 1}, "e2b/chart": map[string]any{"type": "line"},
			}})),
		types: "result,end_of_execution",
		check: func(t *testing.T, ev []map[string]any) {
			r := ev[0]
			extra, _ := r["extra"].(map[string]any)
			if r["is_main_result"] != false || r["text"] != "df" || r["html"] != "<b>x</b>" || r["png"] != "iVBOR" ||
				extra["application/vnd.custom+json"] == nil || r["chart"].(map[string]any)["type"] != "line" {
				t.Errorf("result = %v", r)
			}
		},
	}, {
		name: "binary garbage on stdout",
		script: scripted(reply("ok"),
			rawMsg("stream", "{\"name\":\"stdout\",\"text\":\"a\xff\xfe\\u0000b\"}"),
			rawMsg("stream", `{"name":"stderr","text":"\u0000\u001b[31m"}`)),
		types: "stdout,stderr,end_of_execution",
		check: func(t *testing.T, ev []map[string]any) {
			if ev[0]["text"] != "a\uFFFD\uFFFD\x00b" {
				t.Errorf("stdout = %q", ev[0]["text"])
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t, tc.script, nil)
			events := ts.execute(t, map[string]any{"code": "x"})
			if got := types(events); got != tc.types {
				t.Fatalf("types = %s, want %s", got, tc.types)
			}
			if tc.check != nil {
				tc.check(t, events)
			}
		})
	}
}

func TestExecuteBadRequests(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	tests := []struct {
		name   string
		body   map[string]any
		status int
		text   string
	}{
		{"unknown context", map[string]any{"code": "1", "context_id": "nope"}, 404, "Context nope not found"},
		{"context and language", map[string]any{"code": "1", "context_id": "x", "language": "python"}, 400, "Only one of context_id or language can be provided"},
		{"unknown language", map[string]any{"code": "1", "language": "cobol"}, 400, `Language "cobol" is not supported; available languages: [bash javascript python typescript]`},
		{"language without kernel", map[string]any{"code": "1", "language": "r"}, 400, `Language "r" is not supported`},
		{"bad env var name for bash", map[string]any{"code": "1", "language": "bash", "env_vars": map[string]string{"A-B": "1"}}, 400, `invalid environment variable "A-B" for bash`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := ts.post(t, t.Context(), "/execute", tc.body)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.HasPrefix(string(b), tc.text) {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, b, tc.status, tc.text)
			}
		})
	}
}

func TestExecuteNullsAndLanguages(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	// PY sends explicit nulls; that is the default python context.
	events := ts.execute(t, map[string]any{"code": "a", "context_id": nil, "language": nil, "env_vars": nil})
	if got := types(events); got != "number_of_executions,stdout,end_of_execution" {
		t.Fatalf("types = %s", got)
	}
	for _, lang := range []string{" JS ", "ts", "javascript", "Python", "", "default-by-id"} {
		body := map[string]any{"code": "b", "language": lang}
		if lang == "default-by-id" {
			body = map[string]any{"code": "b", "context_id": "default"}
		}
		if got := types(ts.execute(t, body)); got != "number_of_executions,stdout,end_of_execution" {
			t.Errorf("%q: types = %s", lang, got)
		}
	}
	// python, javascript and typescript each got one default kernel.
	if n := len(ts.starter.all()); n != 3 {
		t.Errorf("kernels started = %d, want 3", n)
	}
	if got := ts.starter.specs[1].Argv[0]; got != "deno" {
		t.Errorf("js kernel argv = %v", ts.starter.specs[1].Argv)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	resp, err := http.Get(ts.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != `"OK"` {
		t.Errorf("health = %d %s", resp.StatusCode, b)
	}
}

// TestExecuteHeadersBeforeKernelStart: a default context whose kernel is
// still starting gets its 200 at once (a sandbox killed meanwhile then
// ends a started stream, as upstream), and a kernel that fails to start is
// an error line, not an HTTP error.
func TestExecuteHeadersBeforeKernelStart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    error
		wantErr bool
	}{
		{"kernel starts", nil, false},
		{"kernel fails", errors.New("no bash here"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			ts := newTestServer(t, nil, func(o *Options) {
				start := o.Start
				o.Start = func(ctx context.Context, spec KernelSpec) (Kernel, error) {
					if spec.Language != "bash" {
						return start(ctx, spec) // python starts with the server
					}
					<-release
					if tc.fail != nil {
						return nil, tc.fail
					}
					return start(ctx, spec)
				}
			})
			// Bounded: before the change the 200 waited for the kernel,
			// which waits for release, so the request timed out here.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			resp := ts.post(t, ctx, "/execute", map[string]any{"code": "echo hi", "language": "bash"})
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d before the kernel started, want 200", resp.StatusCode)
			}
			close(release)
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			events := parseStream(t, raw)
			var gotErr bool
			for _, ev := range events {
				if ev["type"] == "error" {
					gotErr = true
					if ev["name"] != errKernel || !strings.Contains(fmt.Sprint(ev["value"]), "no bash here") {
						t.Errorf("error line %v", ev)
					}
				}
			}
			if gotErr != tc.wantErr {
				t.Errorf("error line: %v, want %v (%v)", gotErr, tc.wantErr, events)
			}
		})
	}
}
