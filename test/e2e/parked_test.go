package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres"
	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestParkedResumesElsewhere: two nodes share a directory (--shared-dir,
// as every node would mount one NFS share) behind one API. A sandbox on
// node B is paused, which parks it there; B is cut off (SIGSTOP), and the
// cluster hands the sandbox to A, where a resume through the API brings
// it back with its files and, on gVisor (checkpointed at pause,
// --checkpoint-after=0), its running processes. The parked copy goes
// with the resume; B, back, destroys only its own copy, and the sandbox
// keeps working on A.
func TestParkedResumesElsewhere(t *testing.T) {
	cfg := loadConfig(t)
	pg := pgtest.Start(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) { parkedResumesElsewhere(t, cfg, pg.NewDatabase(t), rt, 194+3*i) })
	}
}

func parkedResumesElsewhere(t *testing.T, cfg config, url, runtime string, index int) {
	shared := t.TempDir()
	ob, b, api := twoNodesAndAPI(t, cfg, url, index, runtime, "--shared-dir="+shared, "--checkpoint-after=0")
	ctx := t.Context()
	c := goClient(t, cfg, api)
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	sb := createOn(ctx, t, c, st, "node-b")
	memory := runtime == "runsc"
	prepareParked(ctx, t, sb)
	if err := c.Pause(ctx, sb.ID, true); err != nil {
		t.Fatalf("pause: %v", err)
	}
	dir := filepath.Join(shared, "parked", sb.ID)
	waitFor(t, time.Minute, func() bool {
		rec, err := st.GetSandbox(ctx, sb.ID)
		_, serr := os.Stat(filepath.Join(dir, "manifest.json"))
		return err == nil && rec.Parked && serr == nil
	}, "the paused sandbox was never parked")

	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	cont := func() { _ = syscall.Kill(b.cmd.Process.Pid, syscall.SIGCONT) }
	t.Cleanup(cont)
	waitFor(t, nodesDeadAfter+2*nodesHeartbeat+10*time.Second, func() bool {
		rec, err := st.GetSandbox(ctx, sb.ID)
		return err == nil && rec.Node == "node-a"
	}, "the dead node's parked sandbox was never handed to node A")
	t.Logf("parked sandbox handed to node A %v after node B went silent", time.Since(stopped).Round(100*time.Millisecond))

	moved, err := c.Connect(ctx, sb.ID, 5*time.Minute)
	if err != nil {
		t.Fatalf("resume on node A through the API: %v", err)
	}
	checkParked(ctx, t, moved, memory)
	rec, err := st.GetSandbox(ctx, sb.ID)
	if err != nil || rec.Node != "node-a" || rec.Parked || rec.State != "running" {
		t.Fatalf("record after the resume: %+v, %v", rec, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("parked dir after the resume: %v, want it gone", err)
	}

	cont()
	waitNoNetns(t, ob, []string{sb.ID}, 30*time.Second)
	wantNodes(ctx, t, c, map[string]bool{"node-a": true, "node-b": true}, time.Minute)
	wantEcho(ctx, t, moved, "after-b-returned")
	wantNodeOf(ctx, t, st, sb.ID, "node-a")
	if err := moved.Kill(ctx); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if _, err := c.Info(ctx, sb.ID); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("info after the kill: %v, want not found", err)
	}
}

// createOn creates sandboxes through the API until one lands on node
// (placement alternates between two empty nodes) and kills the others.
func createOn(ctx context.Context, t *testing.T, c *warren.Client, st *postgres.Store, node string) *warren.Sandbox {
	t.Helper()
	for range 4 {
		sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		rec, err := st.GetSandbox(ctx, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Node == node {
			return sb
		}
		t.Cleanup(func() { _ = sb.Kill(context.Background()) })
	}
	t.Fatalf("4 creates, none placed on %s", node)
	return nil
}

// prepareParked leaves a file and a running process in sb.
func prepareParked(ctx context.Context, t *testing.T, sb *warren.Sandbox) {
	t.Helper()
	if _, err := sb.Files.Write(ctx, "parked.txt", []byte("kept across nodes"), warren.FileOptions{}); err != nil {
		t.Fatalf("write: %v", err)
	}
	res, err := sb.Commands.Run(ctx, "nohup sleep 3600 >/dev/null 2>&1 & echo $! > sleeper.pid", warren.CommandOptions{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("starting a process: %+v, %v", res, err)
	}
}

// checkParked checks what prepareParked left: the file always, the
// process only where memory moved.
func checkParked(ctx context.Context, t *testing.T, sb *warren.Sandbox, memory bool) {
	t.Helper()
	if data, err := sb.Files.Read(ctx, "parked.txt", warren.FileOptions{}); err != nil || string(data) != "kept across nodes" {
		t.Errorf("file after the move: %q, %v", data, err)
	}
	// By its whole command line: after a cold boot the same pid may be
	// another process's, this very check's shell among them (a fresh pid
	// namespace numbers its first commands alike), whose command line holds
	// the word sleep too.
	var res *warren.CommandResult
	err := testutil.Poll(10*time.Second, 200*time.Millisecond, func() error {
		var err error
		res, err = sb.Commands.Run(ctx, `[ "$(tr '\0' ' ' < /proc/$(cat sleeper.pid)/cmdline 2>/dev/null)" = "sleep 3600 " ] && echo alive || echo gone`, warren.CommandOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("command after the move: %v", err)
	}
	want := map[bool]string{true: "alive", false: "gone"}[memory]
	if got := strings.TrimSpace(res.Stdout); got != want {
		t.Errorf("the process started before the pause is %s after the move, want %s (memory moved: %v)", got, want, memory)
	}
}
