package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/interpreter"
)

const python = "/usr/bin/python3"

// TestRealIPyKernel runs the server on a real ipykernel through
// internal/jupyter. It skips where Debian's python3-ipykernel is missing.
func TestRealIPyKernel(t *testing.T) {
	if err := exec.Command(python, "-c", "import ipykernel_launcher").Run(); err != nil {
		t.Skip("needs python3-ipykernel")
	}
	srv, err := interpreter.New(interpreter.Options{
		Kernels: map[string]interpreter.KernelConfig{
			"python": {Argv: []string{python, "-m", "ipykernel_launcher", "-f", "{connection_file}"}},
		},
		Start:          startKernel,
		Cwd:            t.TempDir(),
		InterruptGrace: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Prestart(t.Context()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer srv.Close(context.Background())
	defer hs.Close()

	steps := []struct {
		name    string
		code    string
		env     map[string]string
		timeout time.Duration
		check   func(t *testing.T, events []map[string]any)
	}{
		// The cwd snippet ran before, silently: the user's count starts at 1.
		{"state", "x = 1\nx += 1\nx", nil, 0, all(wantResult("2"), wantCount(1))},
		{"state kept", "x", nil, 0, wantResult("2")},
		{"stdout", "print('hi')", nil, 0, all(wantStdout("hi\n"), wantCount(3))},
		{"cwd", "import os; os.getcwd()", nil, 0, func(t *testing.T, ev []map[string]any) {
			if r := find(ev, "result"); r == nil || !strings.HasPrefix(r["text"].(string), "/tmp/") {
				t.Errorf("events = %v", ev)
			}
		}},
		// The env_vars save and restore snippets do not skip numbers.
		{"env var set", "print(os.environ.get('FOO'))", map[string]string{"FOO": "bar"}, 0, all(wantStdout("bar\n"), wantCount(5))},
		{"env var reverted", "print(os.environ.get('FOO'))", nil, 0, all(wantStdout("None\n"), wantCount(6))},
		{"syntax error", "1 +", nil, 0, wantError("SyntaxError")},
		{"exception", "raise ValueError('boom')", nil, 0, wantError("ValueError")},
		{"timeout interrupts", "import time; time.sleep(30)", nil, 1500 * time.Millisecond, nil},
		{"state kept after interrupt", "x", nil, 0, wantResult("2")},
		{"kernel death", "import os; os._exit(1)", nil, 0, wantError("KernelDied")},
		{"usable after death", "1 + 1", nil, 0, wantResult("2")},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			events, err := execute(t, hs.URL, st.code, st.env, st.timeout)
			if st.timeout > 0 {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("want a client timeout, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if last := events[len(events)-1]["type"]; last != "end_of_execution" {
				t.Errorf("last event %v", last)
			}
			st.check(t, events)
		})
	}
}

func execute(t *testing.T, url, code string, env map[string]string, timeout time.Duration) ([]map[string]any, error) {
	ctx := t.Context()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	body, _ := json.Marshal(map[string]any{"code": code, "env_vars": env})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/execute", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var events []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		events = append(events, ev)
	}
	return events, sc.Err()
}

func find(events []map[string]any, typ string) map[string]any {
	for _, ev := range events {
		if ev["type"] == typ {
			return ev
		}
	}
	return nil
}

func wantResult(text string) func(*testing.T, []map[string]any) {
	return func(t *testing.T, ev []map[string]any) {
		if r := find(ev, "result"); r == nil || r["text"] != text || r["is_main_result"] != true {
			t.Errorf("want main result %q, events = %v", text, ev)
		}
	}
}

func wantStdout(text string) func(*testing.T, []map[string]any) {
	return func(t *testing.T, ev []map[string]any) {
		if r := find(ev, "stdout"); r == nil || r["text"] != text || r["timestamp"] == "" {
			t.Errorf("want stdout %q, events = %v", text, ev)
		}
	}
}

func wantError(name string) func(*testing.T, []map[string]any) {
	return func(t *testing.T, ev []map[string]any) {
		if r := find(ev, "error"); r == nil || r["name"] != name {
			t.Errorf("want error %s, events = %v", name, ev)
		}
	}
}

func wantCount(n int) func(*testing.T, []map[string]any) {
	return func(t *testing.T, ev []map[string]any) {
		if r := find(ev, "number_of_executions"); r == nil || r["execution_count"] != float64(n) {
			t.Errorf("want number_of_executions %d, events = %v", n, ev)
		}
	}
}

func all(checks ...func(*testing.T, []map[string]any)) func(*testing.T, []map[string]any) {
	return func(t *testing.T, ev []map[string]any) {
		for _, c := range checks {
			c(t, ev)
		}
	}
}
