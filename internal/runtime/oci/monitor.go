package oci

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	gorunc "github.com/containerd/go-runc"
)

// go-runc builds every command with warren's whole environment and has no
// hook for the command line, but it starts every one through its package
// Monitor. monitor wraps the default one and rewrites the commands that
// carry callMarker (set through the call's context, see warrenCall):
//
//   - their environment becomes runtimeEnv: the runtime's long-lived
//     processes (runsc's gofer, runc's init before it execs) inherit it, and
//     warren's own (WARREN_API_KEY, say) is none of their business;
//   - with niceMarker, the runtime runs under nice(1) at the lowest priority,
//     set before it execs, so every thread and child it makes has it;
//   - what the runtime prints on stderr where go-runc would drop it (list
//     reads stdout only) is kept, and a failure's error carries its tail.
//
// Commands without the marker (another user of go-runc in the binary) are
// left as they are. Waiting stays the default monitor's exec.Cmd.Wait: the
// subreaper leaves processes in warren's own pid namespace to it (see
// internal/subreaper), so the runtime's exit status is never taken away.
type monitor struct{ next gorunc.ProcessMonitor }

const (
	callMarker = "WARREN_OCI_CALL=1"
	niceMarker = "WARREN_OCI_NICE=1"
)

var monitorOnce sync.Once

// installMonitor puts monitor in front of go-runc's current Monitor, once.
func installMonitor() {
	monitorOnce.Do(func() { gorunc.Monitor = monitor{next: gorunc.Monitor} })
}

// warrenCall marks the go-runc calls made with ctx as warren's (and as run
// in the background).
func warrenCall(ctx context.Context, background bool) context.Context {
	if background {
		return gorunc.WithExtraEnv(ctx, callMarker, niceMarker)
	}
	return gorunc.WithExtraEnv(ctx, callMarker)
}

func (m monitor) Start(cmd *exec.Cmd) (chan gorunc.Exit, error) {
	prepare(cmd)
	return m.next.Start(cmd)
}

func (m monitor) StartLocked(cmd *exec.Cmd) (chan gorunc.Exit, error) {
	prepare(cmd)
	return m.next.StartLocked(cmd)
}

func (m monitor) Wait(cmd *exec.Cmd, ec chan gorunc.Exit) (int, error) {
	status, err := m.next.Wait(cmd, ec)
	if t, ok := cmd.Stderr.(*stderrTail); ok && err == nil && status != 0 {
		return status, &exitError{status: status, stderr: strings.TrimSpace(t.String())}
	}
	return status, err
}

// stderrTail keeps the last stderrKeep bytes a runtime printed on stderr.
type stderrTail struct{ bytes.Buffer }

const stderrKeep = 4096

func (t *stderrTail) Write(p []byte) (int, error) {
	n, _ := t.Buffer.Write(p)
	if over := t.Len() - stderrKeep; over > 0 {
		t.Next(over)
	}
	return n, nil
}

// exitError is a runtime's non-zero exit with the words it printed; it
// unwraps to go-runc's own.
type exitError struct {
	status int
	stderr string
}

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d: %s", e.status, e.stderr) }

func (e *exitError) Unwrap() error { return &gorunc.ExitError{Status: e.status} }

// prepare rewrites a marked command as monitor describes.
func prepare(cmd *exec.Cmd) {
	if !slices.Contains(cmd.Env, callMarker) {
		return
	}
	nice := slices.Contains(cmd.Env, niceMarker)
	cmd.Env = runtimeEnv()
	if cmd.Stderr == nil {
		cmd.Stderr = &stderrTail{}
	}
	if !nice {
		return
	}
	path, err := exec.LookPath("nice")
	if err != nil {
		cmd.Err = err
		return
	}
	cmd.Args = append([]string{"nice", "-n", "19", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = path
}

// runtimeEnv is what the runtimes need: a PATH (runc looks up helpers)
// and, where set, TMPDIR.
func runtimeEnv() []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if t := os.Getenv("TMPDIR"); t != "" {
		env = append(env, "TMPDIR="+t)
	}
	return env
}
