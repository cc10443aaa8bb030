package jupyter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// python is Debian's interpreter: the one PATH finds may be a pyenv build
// without ipykernel.
const python = "/usr/bin/python3"

func pythonSpec(t *testing.T) KernelSpec {
	t.Helper()
	if err := exec.Command(python, "-c", "import ipykernel").Run(); err != nil {
		t.Skipf("skipping: %s has no ipykernel (apt-get install python3-ipykernel): %v", python, err)
	}
	return KernelSpec{
		Argv:     []string{python, "-m", "ipykernel_launcher", "-f", "{connection_file}"},
		Dir:      t.TempDir(),
		Language: "python",
	}
}

func startKernel(t *testing.T, spec KernelSpec) *Kernel {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	k, err := Start(ctx, spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

// run executes code and collects its iopub messages.
func run(t *testing.T, k *Kernel, code string) (*ExecuteReplyContent, []*Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	var msgs []*Message
	reply, err := k.Execute(ctx, code, func(m *Message) { msgs = append(msgs, m) })
	if err != nil {
		t.Fatalf("Execute(%q): %v", code, err)
	}
	var rc ExecuteReplyContent
	if err := reply.Decode(&rc); err != nil {
		t.Fatalf("decoding execute_reply: %v", err)
	}
	return &rc, msgs
}

// ofType returns the messages of one msg_type.
func ofType(msgs []*Message, typ string) []*Message {
	var out []*Message
	for _, m := range msgs {
		if m.Type() == typ {
			out = append(out, m)
		}
	}
	return out
}

func resultText(t *testing.T, msgs []*Message) string {
	t.Helper()
	res := ofType(msgs, "execute_result")
	if len(res) != 1 {
		t.Fatalf("got %d execute_result messages, want 1", len(res))
	}
	var dc DataContent
	if err := res[0].Decode(&dc); err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(dc.Data["text/plain"], &s); err != nil {
		t.Fatalf("text/plain: %v", err)
	}
	return s
}

// TestPython runs the behaviours that keep the kernel usable on one kernel,
// in order, because they build on each other's state.
func TestPython(t *testing.T) {
	t.Parallel()
	k := startKernel(t, pythonSpec(t))

	t.Run("kernel info", func(t *testing.T) {
		var info struct {
			LanguageInfo struct{ Name string } `json:"language_info"`
		}
		if err := json.Unmarshal(k.Info(), &info); err != nil || info.LanguageInfo.Name != "python" {
			t.Fatalf("kernel info language %q, err %v", info.LanguageInfo.Name, err)
		}
	})
	t.Run("state kept", func(t *testing.T) {
		run(t, k, "x = 1")
		rc, msgs := run(t, k, "x + 1")
		if rc.Status != "ok" || resultText(t, msgs) != "2" {
			t.Fatalf("status %q, result %q", rc.Status, resultText(t, msgs))
		}
		if n := len(ofType(msgs, "execute_input")); n != 1 {
			t.Errorf("%d execute_input messages", n)
		}
		if last := msgs[len(msgs)-1]; !isIdle(last) {
			t.Errorf("last message %s, want status idle", last.Type())
		}
	})
	t.Run("streams in order", func(t *testing.T) {
		code := "import sys\nprint('a', flush=True)\nprint('b', file=sys.stderr, flush=True)\nprint('c', flush=True)"
		_, msgs := run(t, k, code)
		var got []string
		for _, m := range ofType(msgs, "stream") {
			var sc StreamContent
			_ = m.Decode(&sc)
			got = append(got, sc.Name+":"+strings.TrimSpace(sc.Text))
		}
		if want := "stdout:a stderr:b stdout:c"; strings.Join(got, " ") != want {
			t.Fatalf("streams %q, want %q", got, want)
		}
	})
	t.Run("exception", func(t *testing.T) { testException(t, k) })
	t.Run("display data", func(t *testing.T) { testDisplay(t, k) })
	t.Run("interrupt", func(t *testing.T) { testInterrupt(t, k) })
	t.Run("concurrent executes in order", func(t *testing.T) { testConcurrent(t, k) })
	t.Run("huge message", func(t *testing.T) { testHugeMessage(t, k) })
}

// testHugeMessage prints more in one write than a message may carry: the
// stream message arrives marked as dropped, and the kernel goes on.
func testHugeMessage(t *testing.T, k *Kernel) {
	_, msgs := run(t, k, "print('x' * (40 << 20))")
	var dropped uint64
	for _, m := range ofType(msgs, "stream") {
		dropped += m.Dropped
	}
	if dropped < 40<<20 {
		t.Fatalf("dropped %d bytes, want the 40 MiB print", dropped)
	}
	if rc, msgs := run(t, k, "1 + 1"); rc.Status != "ok" || resultText(t, msgs) != "2" {
		t.Fatalf("after a huge message: %q, %q", rc.Status, resultText(t, msgs))
	}
}

func testException(t *testing.T, k *Kernel) {
	rc, msgs := run(t, k, "1/0")
	errs := ofType(msgs, "error")
	if rc.Status != "error" || rc.EName != "ZeroDivisionError" || len(errs) != 1 {
		t.Fatalf("reply %+v, %d error messages", rc, len(errs))
	}
	var ec ErrorContent
	_ = errs[0].Decode(&ec)
	if ec.EName != "ZeroDivisionError" || ec.EValue != "division by zero" || len(ec.Traceback) == 0 {
		t.Fatalf("error content %+v", ec)
	}
}

func testDisplay(t *testing.T, k *Kernel) {
	rc, msgs := run(t, k, "from IPython.display import display, HTML; display(HTML('<b>hi</b>'))")
	dd := ofType(msgs, "display_data")
	if rc.Status != "ok" || len(dd) != 1 {
		t.Fatalf("status %q, %d display_data messages", rc.Status, len(dd))
	}
	var dc DataContent
	_ = dd[0].Decode(&dc)
	if string(dc.Data["text/html"]) != `"<b>hi</b>"` {
		t.Fatalf("text/html %s", dc.Data["text/html"])
	}
}

func testInterrupt(t *testing.T, k *Kernel) {
	go func() {
		time.Sleep(500 * time.Millisecond)
		if err := k.Interrupt(t.Context()); err != nil {
			t.Errorf("Interrupt: %v", err)
		}
	}()
	start := time.Now()
	rc, msgs := run(t, k, "import time; time.sleep(30)")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("interrupted execute took %v", d)
	}
	if rc.Status != "error" || rc.EName != "KeyboardInterrupt" || len(ofType(msgs, "error")) != 1 {
		t.Fatalf("reply %+v", rc)
	}
	if _, msgs := run(t, k, "x"); resultText(t, msgs) != "1" {
		t.Fatal("state lost after interrupt")
	}
}

func testConcurrent(t *testing.T, k *Kernel) {
	const n = 5
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, msgs := run(t, k, fmt.Sprintf("import time; time.sleep(0.05); print(%d)", i))
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ofType(msgs, "stream") {
				var sc StreamContent
				_ = m.Decode(&sc)
				order = append(order, strings.TrimSpace(sc.Text))
			}
		}()
		time.Sleep(10 * time.Millisecond) // fixes the arrival order
	}
	wg.Wait()
	if got := strings.Join(order, ","); got != "0,1,2,3,4" {
		t.Fatalf("outputs in order %s, want 0,1,2,3,4", got)
	}
}

func TestCrash(t *testing.T) {
	t.Parallel()
	k := startKernel(t, pythonSpec(t))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := k.Execute(ctx, "import os; os._exit(1)", nil)
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Execute after os._exit: %v, want ErrUnavailable", err)
	}
	select {
	case <-k.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the kernel exited")
	}
	if _, err := k.Execute(ctx, "1", nil); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Execute on a dead kernel: %v, want ErrUnavailable", err)
	}
	// A dead kernel can be brought back.
	if err := k.Restart(ctx); err != nil {
		t.Fatalf("Restart after crash: %v", err)
	}
	if _, msgs := run(t, k, "1 + 1"); resultText(t, msgs) != "2" {
		t.Fatal("restarted kernel does not compute")
	}
}

func TestRestartLosesState(t *testing.T) {
	t.Parallel()
	k := startKernel(t, pythonSpec(t))
	run(t, k, "y = 42")
	oldPid, oldDone := k.Pid(), k.Done()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := k.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	select {
	case <-oldDone:
	default:
		t.Error("old kernel's Done not closed after Restart")
	}
	if k.Pid() == oldPid || pidAlive(oldPid) {
		t.Errorf("old kernel pid %d still alive or reused (new %d)", oldPid, k.Pid())
	}
	rc, msgs := run(t, k, "y")
	if rc.Status != "error" || rc.EName != "NameError" || len(ofType(msgs, "error")) != 1 {
		t.Fatalf("after restart: %+v", rc)
	}
}

func pidAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// TestShutdownLeavesNothing checks that the process is gone and no goroutine
// is left. It is not parallel: goroutine counts need a quiet process.
func TestShutdownLeavesNothing(t *testing.T) {
	spec := pythonSpec(t)
	before := runtime.NumGoroutine()
	k := startKernel(t, spec)
	run(t, k, "print('hi')")
	pid, done := k.Pid(), k.Done()
	if err := k.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := k.Shutdown(t.Context()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	select {
	case <-done:
	default:
		t.Fatal("Done not closed after Shutdown")
	}
	if pidAlive(pid) {
		t.Fatalf("kernel pid %d still exists after Shutdown", pid)
	}
	if _, err := k.Execute(t.Context(), "1", nil); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Execute after Shutdown: %v", err)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := runtime.NumGoroutine(); n > before {
			return fmt.Errorf("%d goroutines, %d before", n, before)
		}
		return nil
	})
}

// TestExecuteContextCancel also covers the "message" interrupt mode
// (TestPython covers "signal").
func TestExecuteContextCancel(t *testing.T) {
	t.Parallel()
	spec := pythonSpec(t)
	spec.InterruptMode = "message"
	k := startKernel(t, spec)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := k.Execute(ctx, "import time; time.sleep(30)", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Execute past its deadline: %v", err)
	}
	if err := k.Interrupt(t.Context()); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	// The interrupted run's messages belong to no pending request and are
	// ignored; the next execute sees only its own.
	if _, msgs := run(t, k, "3 * 3"); resultText(t, msgs) != "9" || len(ofType(msgs, "error")) != 0 {
		t.Fatal("kernel unusable after a cancelled execute")
	}
}

func TestStartFailure(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := Start(ctx, KernelSpec{Argv: []string{"/bin/sh", "-c", "echo boom >&2; exit 3"}})
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Start of a failing kernel: %v", err)
	}
	if _, err := Start(ctx, KernelSpec{}); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("Start with empty argv: %v", err)
	}
}

// TestExecuteAfterError guards against ipykernel's abort window: a request
// sent right after a failed one must run, not come back "aborted".
func TestExecuteAfterError(t *testing.T) {
	t.Parallel()
	k := startKernel(t, pythonSpec(t))
	for i := range 20 {
		run(t, k, "1/0")
		if rc, _ := run(t, k, "1"); rc.Status != "ok" {
			t.Fatalf("iteration %d: status %q after an error", i, rc.Status)
		}
	}
}

// TestExecuteSilent checks that hidden code runs, completes on its busy/idle
// and reply alone, and leaves the user's execution_count untouched.
func TestExecuteSilent(t *testing.T) {
	t.Parallel()
	k := startKernel(t, pythonSpec(t))
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for _, code := range []string{"z = 7", "z += 1"} {
		reply, err := k.ExecuteSilent(ctx, code)
		if err != nil {
			t.Fatalf("ExecuteSilent(%q): %v", code, err)
		}
		var rc ExecuteReplyContent
		if err := reply.Decode(&rc); err != nil || rc.Status != "ok" {
			t.Fatalf("silent reply %+v, %v", rc, err)
		}
	}
	rc, msgs := run(t, k, "z")
	if rc.ExecutionCount != 1 || resultText(t, msgs) != "8" {
		t.Errorf("first user execution: count %d, result %q; want 1, 8", rc.ExecutionCount, resultText(t, msgs))
	}
	if _, err := k.ExecuteSilent(ctx, "z = 0"); err != nil {
		t.Fatal(err)
	}
	if rc, _ := run(t, k, "z"); rc.ExecutionCount != 2 {
		t.Errorf("second user execution count = %d, want 2", rc.ExecutionCount)
	}
}
