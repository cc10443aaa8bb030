package process_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
	"github.com/warren-sandbox/warren/internal/envd/state"
)

func TestStartExit(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	tests := []struct {
		name       string
		script     string
		stdout     string
		stderr     string
		code       int32
		exited     bool
		status     string
		wantErrMsg bool
	}{
		{name: "success", script: "echo hello", stdout: "hello\n", code: 0, exited: true, status: "exit status 0"},
		{name: "stderr", script: "echo oops >&2", stderr: "oops\n", code: 0, exited: true, status: "exit status 0"},
		{name: "exit code", script: "echo partial; exit 3", stdout: "partial\n", code: 3, exited: true, status: "exit status 3", wantErrMsg: true},
		{name: "killed", script: "kill -9 $$", code: -1, exited: false, status: "signal: killed", wantErrMsg: true},
		{name: "terminated", script: "kill -TERM $$", code: -1, exited: false, status: "signal: terminated", wantErrMsg: true},
		{name: "large output", script: "head -c 300000 /dev/zero | tr '\\0' a", stdout: strings.Repeat("a", 300000), exited: true, status: "exit status 0"},
		{name: "background job keeps stdout", script: "sleep 5 & echo main", stdout: "main\n", exited: true, status: "exit status 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := run(t, c, startReq(tt.script))
			if r.err != nil {
				t.Fatalf("stream error: %v", r.err)
			}
			if r.pid == 0 || r.end == nil {
				t.Fatalf("pid %d, end %v", r.pid, r.end)
			}
			if r.stdout.String() != tt.stdout || r.stderr.String() != tt.stderr {
				t.Errorf("stdout %q stderr %q, want %q %q", r.stdout.String(), r.stderr.String(), tt.stdout, tt.stderr)
			}
			if r.end.GetExitCode() != tt.code || r.end.GetExited() != tt.exited || r.end.GetStatus() != tt.status {
				t.Errorf("end = %v, want code %d exited %v status %q", r.end, tt.code, tt.exited, tt.status)
			}
			if (r.end.Error != nil) != tt.wantErrMsg || (tt.wantErrMsg && r.end.GetError() != tt.status) {
				t.Errorf("end.error = %v, want set=%v", r.end.Error, tt.wantErrMsg)
			}
			if time.Since(start) > 4*time.Second {
				t.Errorf("took %v: end was held back", time.Since(start))
			}
		})
	}
}

func TestStartEnvAndCwd(t *testing.T) {
	t.Parallel()
	e, c := newEnv(t)
	e.Server.State().Apply(state.Init{EnvVars: map[string]string{"A": "global", "B": "global", "HOME": "/overridden"}})
	req := startReq(`echo "$A $B $HOME $USER $LOGNAME"; pwd; test -n "$PATH" && echo path`)
	req.Process.Envs = map[string]string{"B": "request"}
	r := run(t, c, req)
	want := fmt.Sprintf("global request /overridden %s %s\n%s\npath\n", envdtest.TestUser, envdtest.TestUser, e.Home)
	if r.stdout.String() != want {
		t.Errorf("stdout = %q, want %q", r.stdout.String(), want)
	}

	sub := t.TempDir()
	req = startReq("pwd")
	req.Process.Cwd = &sub
	if r := run(t, c, req); r.stdout.String() != sub+"\n" {
		t.Errorf("cwd: stdout = %q, want %q", r.stdout.String(), sub)
	}

	// A relative cwd is relative to the user's home.
	if err := os.Mkdir(e.Home+"/rel", 0o755); err != nil {
		t.Fatal(err)
	}
	req = startReq("pwd")
	req.Process.Cwd = ptr("rel")
	if r := run(t, c, req); r.stdout.String() != e.Home+"/rel\n" {
		t.Errorf("relative cwd: stdout = %q", r.stdout.String())
	}
}

func TestStartDefaultWorkdir(t *testing.T) {
	t.Parallel()
	e, c := newEnv(t)
	wd := t.TempDir()
	e.Server.State().Apply(state.Init{DefaultWorkdir: &wd})
	if r := run(t, c, startReq("pwd")); r.stdout.String() != wd+"\n" {
		t.Errorf("stdout = %q, want %q", r.stdout.String(), wd)
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	tests := []struct {
		name    string
		req     *pb.StartRequest
		opts    []connect.ClientOption
		code    connect.Code
		message string
	}{
		{name: "missing cwd", req: func() *pb.StartRequest {
			r := startReq("true")
			r.Process.Cwd = ptr("/nonexistent-warren-dir")
			return r
		}(), code: connect.CodeInvalidArgument, message: "cwd '/nonexistent-warren-dir' does not exist"},
		{name: "unknown user", req: startReq("true"), opts: []connect.ClientOption{envdtest.WithHeader("Authorization", envdtest.BasicUser("nobody-here"))}, code: connect.CodeUnauthenticated},
		{name: "malformed auth", req: startReq("true"), opts: []connect.ClientOption{envdtest.WithHeader("Authorization", "Bearer x")}, code: connect.CodeUnauthenticated},
		{name: "empty cmd", req: &pb.StartRequest{Process: &pb.ProcessConfig{}}, code: connect.CodeInvalidArgument},
		{name: "no process", req: &pb.StartRequest{}, code: connect.CodeInvalidArgument},
		{name: "missing executable", req: &pb.StartRequest{Process: &pb.ProcessConfig{Cmd: "no-such-binary-warren"}}, code: connect.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := e.ProcessClient(tt.opts...).Start(t.Context(), connect.NewRequest(tt.req))
			if err == nil {
				r := collect(s)
				err = r.err
				if r.pid != 0 {
					t.Errorf("got a start event for a failing Start")
				}
			}
			if connect.CodeOf(err) != tt.code {
				t.Fatalf("error = %v, want code %v", err, tt.code)
			}
			var ce *connect.Error
			if tt.message != "" && (!errors.As(err, &ce) || ce.Message() != tt.message) {
				t.Errorf("message = %q, want %q", ce.Message(), tt.message)
			}
		})
	}
}

func TestStartTimeoutKillsProcess(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	s, pid := started(t, ctx, c, startReq("sleep 30"))
	r := collect(s)
	if connect.CodeOf(r.err) != connect.CodeDeadlineExceeded {
		t.Fatalf("stream error = %v, want deadline_exceeded", r.err)
	}
	// The process is gone, and a re-attach gives its retained end.
	envdtest.Eventually(t, 5*time.Second, func() bool { return syscall.Kill(int(pid), 0) != nil }, "pid %d still alive", pid)
	cs, err := c.Connect(t.Context(), connect.NewRequest(&pb.ConnectRequest{Process: byPid(pid)}))
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(cs); r.end.GetStatus() != "signal: killed" || r.end.GetExitCode() != -1 {
		t.Errorf("retained end = %v (err %v)", r.end, r.err)
	}
}

func TestKeepalive(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	c := e.ProcessClient(envdtest.WithHeader("Keepalive-Ping-Interval", "0.1"))
	r := run(t, c, startReq("sleep 0.6; echo done"))
	if r.keepalives < 2 || r.stdout.String() != "done\n" {
		t.Errorf("keepalives = %d, stdout %q", r.keepalives, r.stdout.String())
	}
}

func TestRunAsUser(t *testing.T) {
	envdtest.RequireRoot(t)
	t.Parallel()
	e := envdtest.New(t)
	c := e.ProcessClient(envdtest.WithHeader("Authorization", envdtest.BasicUser(envdtest.SBUser)))
	r := run(t, c, startReq(`id -u; id -g; id -G; echo "$HOME"; pwd; touch f; stat -c %u f`))
	if r.err != nil {
		t.Fatalf("stream error: %v", r.err)
	}
	want := fmt.Sprintf("%d\n%d\n%d %d\n%s\n%s\n%d\n", envdtest.SBUID, envdtest.SBUID, envdtest.SBUID, envdtest.ExtraGID, e.SBHome, e.SBHome, envdtest.SBUID)
	if r.stdout.String() != want || r.end.GetExitCode() != 0 {
		t.Errorf("stdout = %q (stderr %q), want %q", r.stdout.String(), r.stderr.String(), want)
	}
}
