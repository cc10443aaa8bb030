package oci

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// fakeRuntime writes a runtime binary that records its arguments,
// environment and niceness in dir/call, prints out on stdout and errOut on
// stderr, and exits with code.
func fakeRuntime(t *testing.T, out, errOut string, code int) (bin, record string) {
	t.Helper()
	dir := t.TempDir()
	bin, record = filepath.Join(dir, "runtime"), filepath.Join(dir, "call")
	script := "#!/bin/sh\n{ echo \"args: $*\"; echo \"nice: $(nice)\"; env | sort; } > '" + record + "'\n" +
		"printf '%s' '" + out + "'\nprintf '%s' '" + errOut + "' >&2\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, record
}

// TestCLI drives a fake runtime through go-runc: the command line each verb
// makes, the environment the runtime gets (no warren secrets), the
// background niceness, and how answers and errors are read.
func TestCLI(t *testing.T) {
	t.Setenv("WARREN_API_KEY", "secret")
	for _, tc := range []struct {
		name       string
		out, err   string
		code       int
		mem        memoryFlags // what probeMemoryFlags found
		call       func(c *cli) error
		wantArgs   string
		wantNice   string
		wantErr    error // errors.Is; nil for success
		wantErrSub string
	}{
		{name: "state", out: `{"id":"a","pid":42,"status":"running"}`,
			call: func(c *cli) error {
				st, err := c.state(t.Context(), "a")
				if err == nil && (st.Pid != 42 || st.Status != "running") {
					return errors.New("wrong state")
				}
				return err
			},
			wantArgs: "--root /r --flag=1 state a", wantNice: "0"},
		{name: "state of a missing container", err: "container does not exist", code: 1,
			call:     func(c *cli) error { _, err := c.state(t.Context(), "a"); return err },
			wantArgs: "--root /r --flag=1 state a", wantNice: "0", wantErr: errdefs.ErrNotFound},
		{name: "state fails otherwise", err: "permission denied", code: 1,
			call:     func(c *cli) error { _, err := c.state(t.Context(), "a"); return err },
			wantArgs: "--root /r --flag=1 state a", wantNice: "0", wantErrSub: "permission denied"},
		{name: "empty list", out: "null",
			call: func(c *cli) error {
				m, err := c.list(t.Context())
				if err == nil && len(m) != 0 {
					return errors.New("containers from null")
				}
				return err
			},
			wantArgs: "--root /r --flag=1 list --format=json", wantNice: "0"},
		{name: "a failed list keeps the runtime's words", out: "[]", err: "open state.json: no such file", code: 1,
			call:     func(c *cli) error { _, err := c.list(t.Context()); return err },
			wantArgs: "--root /r --flag=1 list --format=json", wantNice: "0", wantErrSub: "open state.json: no such file"},
		{name: "delete of a missing container", err: "container a does not exist", code: 1,
			call:     func(c *cli) error { return c.forceDelete(t.Context(), "a") },
			wantArgs: "--root /r --flag=1 delete --force a", wantNice: "0"},
		{name: "pause keeps the runtime's words", err: "unable to freeze", code: 1,
			call:     func(c *cli) error { return c.pause(t.Context(), "a") },
			wantArgs: "--root /r --flag=1 pause a", wantNice: "0", wantErrSub: "unable to freeze"},
		{name: "checkpoint", call: func(c *cli) error { return c.checkpoint(t.Context(), "a", "/img") },
			wantArgs: "--root /r --flag=1 checkpoint --image-path /img a", wantNice: "0"},
		{name: "checkpoint for a fast resume", mem: memoryFlags{checkpoint: []string{"--compression=none"}},
			call:     func(c *cli) error { return c.checkpoint(t.Context(), "a", "/img") },
			wantArgs: "--root /r --flag=1 checkpoint --image-path /img --compression=none a", wantNice: "0"},
		{name: "run in the background",
			call:     func(c *cli) error { return c.run(t.Context(), "a", "/b", "/p", os.Stderr, true) },
			wantArgs: "--root /r --flag=1 run --bundle /b --pid-file /p --detach a", wantNice: "19"},
		{name: "restore",
			call:     func(c *cli) error { return c.restore(t.Context(), "a", "/b", "/img", "/p", os.Stderr) },
			wantArgs: "--root /r --flag=1 restore --image-path /img --detach --pid-file /p --bundle /b a", wantNice: "0"},
		{name: "restore loading pages in the background", mem: memoryFlags{restore: []string{"--background"}},
			call:     func(c *cli) error { return c.restore(t.Context(), "a", "/b", "/img", "/p", os.Stderr) },
			wantArgs: "--root /r --flag=1 restore --image-path /img --detach --pid-file /p --background --bundle /b a", wantNice: "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, record := fakeRuntime(t, tc.out, tc.err, tc.code)
			c := newCLI(bin, "/r", []string{"--flag=1"}, nil)
			c.mem = tc.mem
			err := tc.call(c)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			case tc.wantErrSub != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrSub)):
				t.Errorf("err = %v, want one saying %q", err, tc.wantErrSub)
			case tc.wantErr == nil && tc.wantErrSub == "" && err != nil:
				t.Errorf("err = %v", err)
			}
			data, rerr := os.ReadFile(record)
			if rerr != nil {
				t.Fatal(rerr)
			}
			got := string(data)
			if !strings.Contains(got, "args: "+tc.wantArgs+"\n") {
				t.Errorf("call:\n%s\nwant args %q", got, tc.wantArgs)
			}
			if !strings.Contains(got, "nice: "+tc.wantNice+"\n") {
				t.Errorf("call:\n%s\nwant niceness %s", got, tc.wantNice)
			}
			if strings.Contains(got, "WARREN") || strings.Contains(got, "secret") {
				t.Errorf("warren's environment reached the runtime:\n%s", got)
			}
		})
	}
}
