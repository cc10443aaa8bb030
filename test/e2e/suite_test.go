package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// runSDKSuite runs the JavaScript tests in sdk/ with node's test runner
// against srv, loading the SDK from npm package pkg. With -v the output
// streams to the test log as it comes; otherwise it is shown on failure.
func runSDKSuite(t *testing.T, cfg config, srv *server, pkg string) {
	runNodeSuite(t, cfg, srv, "sdk", pkg)
}

// runNodeSuite runs the *.test.mjs files of dir (relative to test/e2e).
func runNodeSuite(t *testing.T, cfg config, srv *server, dir, pkg string, only ...string) {
	files, err := filepath.Glob(filepath.Join(cfg.e2eDir, dir, "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s/%s: %v", cfg.e2eDir, dir, err)
	}
	// --test-force-exit: a stream the SDK abandons (CommandHandle.disconnect
	// racing an event) keeps connect-es's 60 s deadline timer alive and with
	// it the file's process, although every test in it is done.
	args := []string{"--test", "--test-force-exit", "--test-reporter=spec", "--test-concurrency=4"}
	for _, name := range only {
		args = append(args, "--test-name-pattern="+name)
	}
	for _, f := range files {
		args = append(args, filepath.Join(dir, filepath.Base(f)))
	}

	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout(t, cfg))
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = cfg.e2eDir
	cmd.Env = append(environWithout("E2B_", "E2E_"),
		"E2E_SDK="+pkg,
		"E2E_RUNTIME="+srv.runtime,
		"E2B_API_KEY="+srv.apiKey,
		"E2B_API_URL="+srv.url,
		"E2B_SANDBOX_URL="+srv.url,
		"E2B_DOMAIN="+cfg.domain,
	)
	cmd.WaitDelay = 10 * time.Second

	out := &lineLog{t: t, live: testing.Verbose()}
	cmd.Stdout = out
	cmd.Stderr = out
	start := time.Now()
	err = cmd.Run()
	out.flush()
	if err != nil {
		if !out.live {
			t.Log(out.String())
		}
		srv.failures = append(srv.failures, fmt.Sprintf("%s (%s):\n%s", dir, pkg, out.failing(80)))
		t.Errorf("node --test with %s against %s: %v (after %v)", pkg, srv.url, err, time.Since(start).Round(time.Second))
		return
	}
	if out.live {
		t.Logf("%s: passed in %v", pkg, time.Since(start).Round(time.Second))
	} else {
		t.Logf("%s: passed in %v\n%s", pkg, time.Since(start).Round(time.Second), out.summary())
	}
}

// suiteTimeout bounds one node run by WARREN_E2E_SUITE_TIMEOUT and by the
// go test deadline, leaving time to stop the server.
func suiteTimeout(t *testing.T, cfg config) time.Duration {
	d := cfg.suiteTimeout
	if deadline, ok := t.Deadline(); ok {
		if left := time.Until(deadline) - 2*stopTimeout; left < d {
			d = left
		}
	}
	return d
}

// environWithout returns the environment minus variables with any of the
// prefixes, so that a developer's own E2B settings cannot leak into the run.
func environWithout(prefixes ...string) []string {
	var env []string
outer:
	for _, kv := range os.Environ() {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue outer
			}
		}
		env = append(env, kv)
	}
	return env
}

// lineLog collects a process's output and, when live, logs it line by line.
type lineLog struct {
	t    *testing.T
	live bool

	mu      sync.Mutex // guards the fields below
	all     strings.Builder
	partial string
}

var _ io.Writer = (*lineLog)(nil)

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.Write(p)
	if l.live {
		sc := bufio.NewScanner(strings.NewReader(l.partial + string(p)))
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		l.partial = ""
		if len(p) > 0 && p[len(p)-1] != '\n' && len(lines) > 0 {
			l.partial = lines[len(lines)-1]
			lines = lines[:len(lines)-1]
		}
		for _, line := range lines {
			l.t.Log(line)
		}
	}
	return len(p), nil
}

func (l *lineLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live && l.partial != "" {
		l.t.Log(l.partial)
		l.partial = ""
	}
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.String()
}

// failing returns at most n lines of the failure details node's spec
// reporter prints after the run ("✖ failing tests:"), or the output's tail
// when there are none (node itself failed).
func (l *lineLog) failing(n int) string {
	all := l.String()
	if i := strings.LastIndex(all, "✖ failing tests:"); i >= 0 {
		var lines []string
		for _, line := range strings.Split(strings.TrimRight(all[i:], "\n"), "\n") {
			if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "at ") && strings.Contains(trimmed, "node:") {
				continue // node's own stack frames
			}
			lines = append(lines, line)
		}
		if len(lines) > n {
			lines = append(lines[:n], fmt.Sprintf("… %d more lines", len(lines)-n))
		}
		return strings.Join(lines, "\n")
	}
	return tail(all, n)
}

// summary returns the totals node's spec reporter prints last ("ℹ tests 80").
func (l *lineLog) summary() string {
	var keep []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.HasPrefix(line, "ℹ ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
