package warren

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
	"github.com/warren-sandbox/warren/internal/envd/state"
)

// envdSandbox is a Sandbox whose envd is a real envd handler in-process,
// reached as through warren's sandbox URL.
func envdSandbox(t *testing.T) (*Sandbox, *envdtest.Env) {
	t.Helper()
	env := envdtest.New(t)
	c, err := New(Config{APIKey: "e2b_test", APIURL: "http://127.0.0.1:9", SandboxURL: env.HTTP.URL, HTTPClient: env.Client})
	if err != nil {
		t.Fatal(err)
	}
	return c.sandbox(&rest.Sandbox{SandboxID: "sb1", TemplateID: "base"}), env
}

// TestCommandsRun: output, exit codes, envs, cwd, timeouts and bad input
// come back as E2B's SDKs report them.
func TestCommandsRun(t *testing.T) {
	sb, env := envdSandbox(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name    string
		cmd     string
		o       CommandOptions
		stdout  string
		stderr  string
		exit    int
		wantErr error
		exitErr bool
	}{
		{name: "echo", cmd: "echo hello", stdout: "hello\n"},
		{name: "stderr and status", cmd: "echo oops >&2; exit 3", stderr: "oops\n", exit: 3, exitErr: true},
		{name: "envs", cmd: `echo "$A-$B"`, o: CommandOptions{Envs: map[string]string{"A": "1", "B": "2"}}, stdout: "1-2\n"},
		{name: "cwd", cmd: "pwd", o: CommandOptions{Cwd: "/tmp"}, stdout: "/tmp\n"},
		{name: "missing cwd", cmd: "pwd", o: CommandOptions{Cwd: "/does/not/exist"}, wantErr: ErrInvalid},
		{name: "timeout", cmd: "sleep 5", o: CommandOptions{Timeout: 300 * time.Millisecond}, wantErr: ErrTimeout},
		{name: "unknown user", cmd: "true", o: CommandOptions{User: "nobody-here"}, wantErr: ErrUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := sb.Commands.Run(ctx, tc.cmd, tc.o)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			var exitErr *CommandExitError
			if tc.exitErr != errors.As(err, &exitErr) || (!tc.exitErr && err != nil) {
				t.Fatalf("err = %v", err)
			}
			if res.Stdout != tc.stdout || res.Stderr != tc.stderr || res.ExitCode != tc.exit {
				t.Errorf("result %+v", res)
			}
		})
	}
	if home, err := sb.Commands.Run(ctx, "echo ~", CommandOptions{}); err != nil || strings.TrimSpace(home.Stdout) != env.Home {
		t.Errorf("default user's home: %+v, %v", home, err)
	}
}

// TestCommandsBackground: a started command streams output, takes stdin,
// is listed, survives its handle and can be followed and killed.
func TestCommandsBackground(t *testing.T) {
	sb, _ := envdSandbox(t)
	ctx := t.Context()
	var mu sync.Mutex
	var seen bytes.Buffer
	h, err := sb.Commands.Start(ctx, "cat", CommandOptions{Stdin: true, Tag: "cat", Timeout: NoTimeout,
		OnStdout: func(b []byte) { mu.Lock(); seen.Write(b); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SendStdin(ctx, []byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	envdtest.Eventually(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return seen.String() == "ping\n" }, "no ping on stdout")
	procs, err := sb.Commands.List(ctx)
	if err != nil || len(procs) != 1 || procs[0].PID != h.PID || procs[0].Tag != "cat" {
		t.Fatalf("List = %+v, %v", procs, err)
	}
	h.Disconnect()
	if _, err := h.Wait(); err == nil {
		t.Error("Wait after Disconnect gave no error")
	}
	again, err := sb.Commands.Connect(ctx, h.PID, CommandOptions{Timeout: NoTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Commands.CloseStdin(ctx, h.PID); err != nil {
		t.Fatal(err)
	}
	if res, err := again.Wait(); err != nil || res.ExitCode != 0 {
		t.Fatalf("after EOF: %+v, %v", res, err)
	}
	sleeper, err := sb.Commands.Start(ctx, "sleep 60", CommandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := sleeper.Kill(ctx); !ok || err != nil {
		t.Fatalf("Kill = %v, %v", ok, err)
	}
	var exitErr *CommandExitError
	if _, err := sleeper.Wait(); !errors.As(err, &exitErr) || exitErr.Result.Error != "signal: killed" {
		t.Errorf("killed command: %v", err)
	}
	if ok, err := sb.Commands.Kill(ctx, 999999); ok || err != nil {
		t.Errorf("Kill of no process = %v, %v", ok, err)
	}
}

// TestPty: a terminal echoes what is typed, resizes, and ends on exit.
func TestPty(t *testing.T) {
	sb, _ := envdSandbox(t)
	ctx := t.Context()
	var mu sync.Mutex
	var out bytes.Buffer
	h, err := sb.Pty.Create(ctx, PtyOptions{Cols: 100, Rows: 30, OnData: func(b []byte) { mu.Lock(); out.Write(b); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Pty.Resize(ctx, h.PID, 120, 40); err != nil {
		t.Fatal(err)
	}
	if err := sb.Pty.SendInput(ctx, h.PID, []byte("stty size; echo $TERM; exit\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Wait(); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "40 120") || !strings.Contains(s, "xterm-256color") {
		t.Errorf("terminal output %q", s)
	}
}

// TestFiles: writes, reads, listings, stats, renames, removals and
// watches, with missing paths classified as not found.
func TestFiles(t *testing.T) {
	sb, env := envdSandbox(t)
	ctx := t.Context()
	f := sb.Files
	if e, err := f.Write(ctx, "dir/a.txt", []byte("hello"), FileOptions{}); err != nil || e.Path != filepath.Join(env.Home, "dir/a.txt") {
		t.Fatalf("Write = %+v, %v", e, err)
	}
	if data, err := f.Read(ctx, "dir/a.txt", FileOptions{}); err != nil || string(data) != "hello" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	if _, err := f.Read(ctx, "dir/none", FileOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read of a missing file: %v", err)
	}
	list, err := f.List(ctx, "dir", ListFilesOptions{})
	if err != nil || len(list) != 1 || list[0].Name != "a.txt" || list[0].Type != "file" || list[0].Size != 5 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if ok, err := f.Exists(ctx, "dir/none", FileOptions{}); ok || err != nil {
		t.Errorf("Exists(missing) = %v, %v", ok, err)
	}
	if ok, err := f.MakeDir(ctx, "dir", FileOptions{}); ok || err != nil {
		t.Errorf("MakeDir(existing) = %v, %v", ok, err)
	}
	if e, err := f.Rename(ctx, "dir/a.txt", "dir/b.txt", FileOptions{}); err != nil || e.Name != "b.txt" {
		t.Fatalf("Rename = %+v, %v", e, err)
	}
	if st, err := f.Stat(ctx, "dir", FileOptions{}); err != nil || st.Type != "dir" {
		t.Errorf("Stat = %+v, %v", st, err)
	}
	events := make(chan FsEvent, 16)
	w, err := f.Watch(ctx, "dir", WatchOptions{}, func(e FsEvent) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.Home, "dir/c.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-events:
		if e.Name != "c.txt" || e.Type != "create" {
			t.Errorf("event %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Error("no watch event")
	}
	w.Stop()
	if _, err := f.Watch(ctx, "nowhere", WatchOptions{}, func(FsEvent) {}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Watch of a missing dir: %v", err)
	}
	if err := f.Remove(ctx, "dir", FileOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(ctx, "dir", FileOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Stat after Remove: %v", err)
	}
}

// TestSignedURLs: a URL carries the signature envd checks, over the path
// as given, and works without the token header.
func TestSignedURLs(t *testing.T) {
	sb, env := envdSandbox(t)
	ctx := t.Context()
	if u := sb.Files.DownloadURL("a.txt", URLOptions{}); strings.Contains(u, "signature") {
		t.Errorf("unsigned sandbox's URL is signed: %s", u)
	}
	tok := "secret"
	env.Server.State().Apply(state.Init{AccessToken: &tok})
	if _, err := sb.Files.Read(ctx, "a.txt", FileOptions{}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Read without the token: %v", err)
	}
	sb.EnvdAccessToken = tok
	sb = sb.client.sandbox(&rest.Sandbox{SandboxID: sb.ID, EnvdAccessToken: &tok})
	if _, err := sb.Files.Write(ctx, "a.txt", []byte("x"), FileOptions{}); err != nil {
		t.Errorf("Write with the token: %v", err)
	}
	u := sb.Files.UploadURL("a.txt", URLOptions{User: "tester", Expires: time.Minute})
	if !strings.HasPrefix(u, env.HTTP.URL+"/files?") || !strings.Contains(u, "signature_expiration=") {
		t.Fatalf("upload URL %s", u)
	}
	d := sb.Files.DownloadURL("a.txt", URLOptions{})
	if want := wire.SignFileURL("a.txt", "read", "", "secret", ""); !strings.Contains(d, "signature="+strings.NewReplacer("+", "%2B", "/", "%2F").Replace(want)) {
		t.Errorf("download URL %s lacks signature %s", d, want)
	}
	resp, err := http.Post(u, "application/octet-stream", strings.NewReader("signed"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if data, err := os.ReadFile(filepath.Join(env.Home, "a.txt")); resp.StatusCode != 200 || string(data) != "signed" {
		t.Errorf("upload through the URL: %d, %q, %v", resp.StatusCode, data, err)
	}
	bad := strings.Replace(u, "signature=", "signature=x", 1)
	if resp, err := http.Post(bad, "application/octet-stream", strings.NewReader("forged")); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged URL: %v, %v", resp.StatusCode, err)
	}
}
