package e2e

import (
	"net/http"
	"os/exec"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
)

// TestCPUOverload saturates the host's CPUs (busy loops the test starts on
// the host, six per core) while a sandbox's command runs. A busy machine
// makes work slower, not failed: creates started all at once under the
// hogs wait their turn in the start queue and all succeed (none is
// refused with 503), a command in an idle sandbox still answers, and the
// running command is not cut: it prints every line and exits 0. The
// queue's counts show in /metrics.
func TestCPUOverload(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[len(cfg.runtimes)-1] // runsc when there, the default runtime
	s := launchServer(t, cfg, serverOpts{index: 120, runtime: rt, args: []string{"--start-slots=1"}})
	c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{}}
	ctx := t.Context()
	sb, err := c.Create(ctx, "base", nil)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := c.Create(ctx, "base", nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	var res selftest.Result
	go func() {
		var err error
		res, err = sb.Run(ctx, "user", "for i in $(seq 1 10); do echo tick $i; sleep 1; done")
		ran <- err
	}()

	stopHogs := startHogs(t, 6)
	defer stopHogs()
	time.Sleep(2 * time.Second) // let the hogs take the CPUs
	const creates = 4
	codes := make(chan int, creates)
	for range creates {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, s.url+"/sandboxes", strings.NewReader(`{"templateID":"base","timeout":60}`))
			req.Header.Set("X-API-KEY", s.apiKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := harnessClient.Do(req)
			if err != nil {
				t.Error(err)
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	if r, err := idle.Run(ctx, "user", "echo idle-answers"); err != nil || !strings.Contains(r.Stdout, "idle-answers") {
		t.Errorf("a command in an idle sandbox under the overload: %v, %v", err, r)
	}
	for range creates {
		if code := <-codes; code != http.StatusCreated {
			t.Errorf("a create under the overload answered %d, want 201 (it should wait its turn, not be refused)", code)
		}
	}
	stopHogs()
	select {
	case err := <-ran:
		if err != nil || res.ExitCode != 0 || strings.Count(res.Stdout, "tick") != 10 {
			t.Fatalf("the command running through the overload: %v, %v", err, res)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the command did not finish")
	}
	metrics := string(s.mustCall(t, "GET", "/metrics", "", http.StatusOK))
	for _, want := range []string{"warren_start_running 0", "warren_start_waiting 0", `warren_start_waits_total{outcome="timed_out"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// startHogs starts perCore busy loops per CPU on the host and returns a
// func that kills them (by PID; safe to call twice).
func startHogs(t *testing.T, perCore int) func() {
	t.Helper()
	var cmds []*exec.Cmd
	n := perCore * goruntime.NumCPU()
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	stopped := false
	return func() {
		if stopped {
			return
		}
		stopped = true
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGKILL)
			_ = c.Wait()
		}
	}
}
