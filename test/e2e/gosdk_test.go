package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
	_ "github.com/warren-sandbox/warren/pkg/warren/dockerfile" // BuildDockerfile's converter
)

// TestGoSDK drives a real server with the Go SDK (pkg/warren): create
// with metadata, env vars and a timeout, info, list by metadata, a new
// timeout, pause and connect (which resumes), kill, and the errors it
// classifies afterwards.
func TestGoSDK(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[len(cfg.runtimes)-1]
	s := launchServer(t, cfg, serverOpts{index: 122, runtime: rt})
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 2 * time.Minute,
		Metadata: map[string]string{"sdk": "go"}, EnvVars: map[string]string{"GREETING": "hi"}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	info, err := sb.GetInfo(ctx)
	if err != nil || info.ID != sb.ID || info.State != "running" || info.Metadata["sdk"] != "go" || time.Until(info.EndAt) > 2*time.Minute+5*time.Second {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	list, _, err := c.List(ctx, warren.ListOptions{Metadata: map[string]string{"sdk": "go"}})
	if err != nil || len(list) != 1 || list[0].ID != sb.ID {
		t.Fatalf("List by metadata = %+v, %v", list, err)
	}
	if list, _, err := c.List(ctx, warren.ListOptions{Metadata: map[string]string{"sdk": "python"}}); err != nil || len(list) != 0 {
		t.Fatalf("List by other metadata = %+v, %v", list, err)
	}
	t.Run("envd", func(t *testing.T) { goSDKEnvd(t, sb) })
	t.Run("ops", func(t *testing.T) { goSDKOps(t, c, sb) })
	if err := sb.SetTimeout(ctx, 10*time.Minute); err != nil {
		t.Fatalf("SetTimeout: %v", err)
	}
	if err := sb.Pause(ctx, warren.PauseOptions{}); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if info, err := c.GetInfo(ctx, sb.ID); err != nil || info.State != "paused" {
		t.Fatalf("after Pause: %+v, %v", info, err)
	}
	again, err := c.Connect(ctx, sb.ID, time.Minute)
	if err != nil || again.ID != sb.ID {
		t.Fatalf("Connect: %+v, %v", again, err)
	}
	if info, err := c.GetInfo(ctx, sb.ID); err != nil || info.State != "running" {
		t.Fatalf("after Connect: %+v, %v", info, err)
	}
	if err := sb.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if _, err := c.GetInfo(ctx, sb.ID); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("Info after Kill = %v, want ErrNotFound", err)
	}
	if _, err := c.Create(ctx, "no-such-template", warren.CreateOptions{}); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("Create from a missing template = %v, want ErrNotFound", err)
	}
	bad, _ := warren.New(warren.Config{APIURL: s.url, APIKey: "e2b_" + "0000000000000000000000000000000000000000"})
	if _, _, err := bad.List(ctx, warren.ListOptions{}); !errors.Is(err, warren.ErrUnauthorized) {
		t.Errorf("a wrong key = %v, want ErrUnauthorized", err)
	}
}

// TestGoSDKCodeInterpreter runs code in a code-interpreter-v1 sandbox with
// the Go SDK: an expression's value, streamed stdout, an exception, a
// matplotlib figure (PNG and chart), a context of its own (cwd, state,
// restart, removal), a run cut by its timeout, and a run in a sandbox
// that is gone.
func TestGoSDKCodeInterpreter(t *testing.T) {
	cfg := loadConfig(t)
	s := launchServer(t, cfg, serverOpts{index: 123, runtime: cfg.runtimes[0]})
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sb, err := c.Create(ctx, "code-interpreter-v1", warren.CreateOptions{Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer sb.Kill(context.WithoutCancel(ctx))

	ex, err := sb.RunCode(ctx, "1+1", warren.RunCodeOptions{})
	if err != nil || ex.Text() != "2" || ex.Error != nil || ex.ExecutionCount < 1 {
		t.Fatalf("1+1 = %+v, %v", ex, err)
	}
	var streamed []warren.OutputMessage
	ex, err = sb.RunCode(ctx, "import sys\nprint('hello')\nprint('oops', file=sys.stderr)", warren.RunCodeOptions{
		OnStdout: func(m warren.OutputMessage) { streamed = append(streamed, m) }})
	if err != nil || !slices.Equal(ex.Logs.Stdout, []string{"hello\n"}) || !slices.Equal(ex.Logs.Stderr, []string{"oops\n"}) {
		t.Fatalf("print = %+v, %v", ex, err)
	}
	if len(streamed) != 1 || streamed[0].Line != "hello\n" || time.Since(streamed[0].Timestamp) > time.Minute {
		t.Errorf("OnStdout got %+v", streamed)
	}
	ex, err = sb.RunCode(ctx, "1/0", warren.RunCodeOptions{})
	if err != nil || ex.Error == nil || ex.Error.Name != "ZeroDivisionError" || !strings.Contains(ex.Error.Traceback, "ZeroDivisionError") {
		t.Fatalf("1/0 = %+v, %v: want ZeroDivisionError in Execution.Error", ex, err)
	}
	goSDKChart(t, sb)
	goSDKContext(t, sb)

	_, err = sb.RunCode(ctx, "import time; time.sleep(60)", warren.RunCodeOptions{Timeout: 2 * time.Second})
	if !errors.Is(err, warren.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a run past its timeout = %v, want ErrTimeout", err)
	}
	if ex, err := sb.RunCode(ctx, "'still here'", warren.RunCodeOptions{}); err != nil || ex.Text() != "still here" {
		t.Errorf("after a timeout: %+v, %v", ex, err)
	}
	if err := sb.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if _, err := sb.RunCode(ctx, "1", warren.RunCodeOptions{}); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("RunCode in a killed sandbox = %v, want ErrNotFound", err)
	}
}

// goSDKChart: a matplotlib figure comes as a PNG and as chart data.
func goSDKChart(t *testing.T, sb *warren.Sandbox) {
	t.Helper()
	ex, err := sb.RunCode(t.Context(), "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [4, 5, 6], label='s')\nplt.title('t')\nplt.show()", warren.RunCodeOptions{})
	if err != nil || ex.Error != nil {
		t.Fatalf("plot: %+v, %v", ex, err)
	}
	for _, r := range ex.Results {
		if r.PNG == "" {
			continue
		}
		png, err := base64.StdEncoding.DecodeString(r.PNG)
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("the PNG result is not a PNG: %v", err)
		}
		if ch := r.Chart; ch == nil || ch.Type != "line" || ch.Title != "t" || len(ch.Elements) != 1 || len(ch.Elements[0].Points) != 3 {
			t.Errorf("chart %+v", r.Chart)
		}
		return
	}
	t.Errorf("no PNG among the results: %+v", ex.Results)
}

// goSDKContext: a context has its own cwd and state, which a restart
// drops; a removed context is ErrNotFound.
func goSDKContext(t *testing.T, sb *warren.Sandbox) {
	t.Helper()
	ctx := t.Context()
	cc, err := sb.CreateCodeContext(ctx, warren.CodeContextOptions{Cwd: "/tmp"})
	if err != nil || cc.Cwd != "/tmp" || cc.Language != "python" {
		t.Fatalf("CreateCodeContext = %+v, %v", cc, err)
	}
	run := func(code string, cc *warren.CodeContext) *warren.Execution {
		t.Helper()
		ex, err := sb.RunCode(ctx, code, warren.RunCodeOptions{Context: cc})
		if err != nil {
			t.Fatalf("RunCode(%q): %v", code, err)
		}
		return ex
	}
	run("import os; here = os.getcwd()", cc)
	if ex := run("here", cc); ex.Text() != "/tmp" {
		t.Errorf("cwd in the context = %q (%+v)", ex.Text(), ex.Error)
	}
	if ex := run("here", nil); ex.Error == nil || ex.Error.Name != "NameError" {
		t.Errorf("the default context sees the other's state: %+v", ex)
	}
	list, err := sb.ListCodeContexts(ctx)
	if err != nil || !slices.ContainsFunc(list, func(c warren.CodeContext) bool { return c.ID == cc.ID }) {
		t.Errorf("ListCodeContexts = %+v, %v", list, err)
	}
	if err := sb.RestartCodeContext(ctx, cc.ID); err != nil {
		t.Fatalf("RestartCodeContext: %v", err)
	}
	if ex := run("here", cc); ex.Error == nil || ex.Error.Name != "NameError" {
		t.Errorf("state survived a restart: %+v", ex)
	}
	if err := sb.RemoveCodeContext(ctx, cc.ID); err != nil {
		t.Fatalf("RemoveCodeContext: %v", err)
	}
	if _, err := sb.RunCode(ctx, "1", warren.RunCodeOptions{Context: cc}); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("RunCode in a removed context = %v, want ErrNotFound", err)
	}
}

// TestGoSDKTemplates builds a template from a Dockerfile with the Go SDK
// and manages it: the build's log, a sandbox from the new tag, the name
// taken, tags moved and removed, the template's builds, deletion.
func TestGoSDKTemplates(t *testing.T) {
	cfg := loadConfig(t)
	s := launchServer(t, cfg, serverOpts{index: 124, runtime: cfg.runtimes[0]})
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"Dockerfile": "FROM base\nARG WORD=hi\nCOPY greeting.txt /opt/\nRUN echo $WORD >> /opt/greeting.txt\n",
		"greeting.txt": "hello\n"})
	var logs []string
	ref, err := c.BuildDockerfile(ctx, warren.DockerfileBuild{Name: "gosdk-tpl", Tags: []string{"v1"}, Dir: dir,
		BuildArgs: map[string]string{"WORD": "world"}, OnLog: func(e warren.BuildLogEntry) { logs = append(logs, e.Message) }})
	if err != nil {
		t.Fatalf("BuildDockerfile: %v\n%s", err, strings.Join(logs, "\n"))
	}
	if !slices.Contains(logs, "Uploaded 'greeting.txt'") {
		t.Errorf("the build's log lacks the upload:\n%s", strings.Join(logs, "\n"))
	}
	if got := runIn(t, s, "gosdk-tpl:v1", "cat /opt/greeting.txt"); got != "hello\nworld\n" {
		t.Errorf("sandbox from the template printed %q", got)
	}
	goSDKTemplateBuilder(t, c, s, dir)
	if ok, err := c.TemplateExists(ctx, "gosdk-tpl"); err != nil || !ok {
		t.Errorf("TemplateExists = %v, %v", ok, err)
	}
	if _, err := c.AssignTags(ctx, "gosdk-tpl:v1", []string{"prod"}); err != nil {
		t.Fatalf("AssignTags: %v", err)
	}
	if err := c.RemoveTags(ctx, "gosdk-tpl", []string{"v1"}); err != nil {
		t.Fatalf("RemoveTags: %v", err)
	}
	tags, err := c.ListTemplateTags(ctx, ref.TemplateID)
	names := []string{}
	for _, tg := range tags {
		names = append(names, tg.Tag)
	}
	if err != nil || !slices.Contains(names, "prod") || slices.Contains(names, "v1") {
		t.Errorf("TemplateTags = %q, %v", names, err)
	}
	tpl, err := c.GetTemplate(ctx, "gosdk-tpl")
	if err != nil || tpl.ID != ref.TemplateID || len(tpl.Builds) != 1 || tpl.Builds[0].Status != warren.BuildReady {
		t.Fatalf("GetTemplate = %+v, %v", tpl, err)
	}
	if blog, err := c.GetBuildLogs(ctx, ref.TemplateID, ref.BuildID, warren.BuildLogsOptions{}); err != nil || len(blog) == 0 {
		t.Errorf("BuildLogs = %d lines, %v", len(blog), err)
	}
	if err := c.DeleteTemplate(ctx, ref.TemplateID); err != nil {
		t.Fatalf("DeleteTemplate: %v", err)
	}
	if _, err := c.GetTemplate(ctx, "gosdk-tpl"); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("GetTemplate after DeleteTemplate = %v, want ErrNotFound", err)
	}
	_, err = c.BuildDockerfile(ctx, warren.DockerfileBuild{Name: "gosdk-fail", Dir: writeDockerfile(t, "FROM base\nRUN echo one\nRUN exit 3\n")})
	var be *warren.BuildError
	if !errors.As(err, &be) || be.Line != 3 && !strings.Contains(be.Message, "Dockerfile:3") {
		t.Errorf("a failing RUN = %v, want a BuildError at Dockerfile line 3", err)
	}
}

// writeDockerfile makes a build context holding only this Dockerfile.
func writeDockerfile(t *testing.T, df string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"Dockerfile": df})
	return dir
}
