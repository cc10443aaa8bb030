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
// the host, six per core) while a sandbox's command runs: past
// --max-cpu-pressure a create is refused with 503 and Retry-After instead
// of being admitted to slow everyone down, and the running command is not
// cut: it prints every line and exits 0.
func TestCPUOverload(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[len(cfg.runtimes)-1] // runsc when there, the default runtime
	s := launchServer(t, cfg, serverOpts{index: 120, runtime: rt, args: []string{"--max-cpu-pressure=50"}})
	c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{}}
	ctx := t.Context()
	// What ran before (other tests) may still weigh on the CPUs' 10 s
	// average: wait for the server to admit the sandbox the test needs.
	var sb *selftest.Sandbox
	var err error
	for end := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		if sb, err = c.Create(ctx, "base", nil); err == nil {
			break
		}
		if !strings.Contains(err.Error(), "503") || time.Now().After(end) {
			t.Fatal(err)
		}
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
	refused := false
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && !refused; time.Sleep(500 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/sandboxes", strings.NewReader(`{"templateID":"base","timeout":30}`))
		req.Header.Set("X-API-KEY", s.apiKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := harnessClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusCreated:
			continue // not saturated yet; the sandbox goes with the server's cleanup
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("a refused create (%d) has no Retry-After", resp.StatusCode)
			}
			refused = true
		default:
			t.Fatalf("create under load: %d", resp.StatusCode)
		}
	}
	if !refused {
		t.Error("creates were still admitted after 30 s of saturated CPUs")
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
