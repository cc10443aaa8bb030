package e2e

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// goSDKEnvd drives envd through warren's proxy with the Go SDK: commands
// (output, status, env vars given at create, stdin, kill), a terminal,
// files (write, read, list, watch, a missing path) and a signed download
// URL fetched with no key, token or routing header.
func goSDKEnvd(t *testing.T, sb *warren.Sandbox) {
	ctx := t.Context()
	res, err := sb.Commands.Run(ctx, `echo "$GREETING from $(whoami)"`, warren.CommandOptions{})
	if err != nil || res.Stdout != "hi from user\n" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	var exitErr *warren.CommandExitError
	if res, err := sb.Commands.Run(ctx, "echo no >&2; exit 7", warren.CommandOptions{User: "root"}); !errors.As(err, &exitErr) || res.ExitCode != 7 || res.Stderr != "no\n" {
		t.Errorf("failing Run = %+v, %v", res, err)
	}
	got := make(chan struct{}, 1)
	h, err := sb.Commands.Start(ctx, "read line; echo got $line; sleep 600", warren.CommandOptions{Stdin: true, Timeout: warren.NoTimeout,
		OnStdout: func([]byte) { got <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SendStdin(ctx, []byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no output after stdin")
	}
	if ok, err := sb.Commands.Kill(ctx, h.PID); !ok || err != nil {
		t.Fatalf("Kill = %v, %v", ok, err)
	}
	if res, err := h.Wait(); !errors.As(err, &exitErr) || res.Stdout != "got ping\n" {
		t.Errorf("killed command = %+v, %v", res, err)
	}

	var mu sync.Mutex
	var term bytes.Buffer
	pty, err := sb.Pty.Create(ctx, warren.PtyOptions{Cols: 90, Rows: 20, OnData: func(b []byte) { mu.Lock(); term.Write(b); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Pty.SendInput(ctx, pty.PID, []byte("stty size; exit\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := pty.Wait(); err != nil || !strings.Contains(term.String(), "20 90") {
		t.Errorf("terminal: %q, %v", term.String(), err)
	}

	events := make(chan warren.FsEvent, 8)
	w, err := sb.Files.Watch(ctx, "/home/user", warren.WatchOptions{}, func(e warren.FsEvent) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := sb.Files.Write(ctx, "notes.txt", []byte("from go"), warren.FileOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-events:
		if e.Name != "notes.txt" {
			t.Errorf("watch event %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Error("no watch event")
	}
	if data, err := sb.Files.Read(ctx, "/home/user/notes.txt", warren.FileOptions{}); err != nil || string(data) != "from go" {
		t.Errorf("Read = %q, %v", data, err)
	}
	if list, err := sb.Files.List(ctx, "/home/user", warren.ListFilesOptions{}); err != nil || !hasEntry(list, "notes.txt") {
		t.Errorf("List = %+v, %v", list, err)
	}
	if _, err := sb.Files.Read(ctx, "/nope", warren.FileOptions{}); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("Read of a missing file = %v", err)
	}
	resp, err := http.Get(sb.Files.DownloadURL("notes.txt", warren.URLOptions{Expires: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "from go" {
		t.Errorf("signed URL: %d %q", resp.StatusCode, body)
	}
}

func hasEntry(list []warren.EntryInfo, name string) bool {
	for _, e := range list {
		if e.Name == name && e.Type == "file" {
			return true
		}
	}
	return false
}

// goSDKOps covers the rest of the lifecycle through the Go SDK: metrics,
// logs, a named snapshot that a create starts from, a fork, and a new
// egress policy.
func goSDKOps(t *testing.T, c *warren.Client, sb *warren.Sandbox) {
	ctx := t.Context()
	if _, err := sb.Commands.Run(ctx, "echo logged-line", warren.CommandOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() bool {
		m, err := c.GetMetrics(ctx, sb.ID, time.Time{}, time.Time{})
		return err == nil && len(m) > 0 && m[0].MemTotal > 0
	}, "no metrics")
	if logs, err := c.GetLogs(ctx, sb.ID, warren.LogOptions{}); err != nil || len(logs) == 0 {
		t.Errorf("Logs = %d entries, %v", len(logs), err)
	}
	if err := c.UpdateNetwork(ctx, sb.ID, warren.Network{DenyOut: []string{"0.0.0.0/0"}}); err != nil {
		t.Errorf("UpdateNetwork: %v", err)
	}
	snap, err := c.Snapshot(ctx, sb.ID, "gosdk-snap")
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if list, err := c.ListSnapshots(ctx, sb.ID); err != nil || len(list) != 1 || list[0].ID != snap.ID {
		t.Errorf("Snapshots = %+v, %v", list, err)
	}
	from, err := c.Create(ctx, "gosdk-snap", warren.CreateOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatalf("Create from the snapshot: %v", err)
	}
	defer from.Kill(ctx)
	if data, err := from.Files.Read(ctx, "notes.txt", warren.FileOptions{}); err != nil || string(data) != "from go" {
		t.Errorf("the snapshot's file: %q, %v", data, err)
	}
	forks, err := c.Fork(ctx, sb.ID, 1, time.Minute)
	if err != nil || len(forks) != 1 || forks[0].Err != nil {
		t.Fatalf("Fork = %+v, %v", forks, err)
	}
	defer forks[0].Sandbox.Kill(ctx)
	if res, err := forks[0].Sandbox.Commands.Run(ctx, "cat notes.txt", warren.CommandOptions{}); err != nil || res.Stdout != "from go" {
		t.Errorf("the fork's file: %+v, %v", res, err)
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool, msg string) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal(msg)
		}
	}
}

// goSDKTemplateBuilder builds a template with the SDK's builder, from
// the base template: a script whose quotes and variables must survive, an
// env var, a copied file, and a start command that a create waits for.
func goSDKTemplateBuilder(t *testing.T, c *warren.Client, s *server, dir string) {
	tpl := warren.NewTemplate().FromTemplate("base").
		RunCmd(`echo "it's $((6*7))" > /opt/answer`+"\n"+`echo second >> /opt/answer`).
		SetEnvs(map[string]string{"MOTTO": `say "$hi"`}).
		Copy("greeting.txt", "/opt/greeting.txt").
		SetStartCmd("python3 -m http.server 8000 --directory /opt", "bash -c '</dev/tcp/127.0.0.1/8000'")
	var logs []string
	if _, err := c.BuildTemplate(t.Context(), "gosdk-builder", tpl, warren.TemplateBuildOptions{Dir: dir,
		OnLog: func(e warren.BuildLogEntry) { logs = append(logs, e.Message) }}); err != nil {
		t.Fatalf("BuildTemplate: %v\n%s\nDockerfile:\n%s", err, strings.Join(logs, "\n"), tpl.Dockerfile())
	}
	got := runIn(t, s, "gosdk-builder", `cat /opt/answer /opt/greeting.txt; echo "$MOTTO"; python3 -c 'import urllib.request as u; print(len(u.urlopen("http://127.0.0.1:8000/answer").read()))'`)
	if want := "it's 42\nsecond\nhello\n" + `say "$hi"` + "\n15\n"; got != want {
		t.Errorf("sandbox from the builder's template printed %q, want %q", got, want)
	}
}
