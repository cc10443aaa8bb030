package interpreter

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/jupyter"
)

func TestQueueOrder(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := func(ctx context.Context, k *fakeKernel, code string, emit func(*jupyter.Message)) (*jupyter.Message, error) {
		if code == "first" {
			<-release
		}
		emit(msg("stream", map[string]any{"name": "stdout", "text": code}))
		return reply("ok"), nil
	}
	ts := newTestServer(t, s, nil)
	c, err := ts.lookup(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	codes := []string{"first", "2", "3", "4", "5"}
	for i, code := range codes {
		wg.Go(func() { ts.execute(t, map[string]any{"code": code}) })
		// Each request is queued before the next is sent, so arrival order is known.
		eventually(t, "request queued", func() bool { return c.queue.busy() && c.queue.waiting() == i })
	}
	close(release)
	wg.Wait()
	if got := ts.starter.all()[0].userCodes(); !slices.Equal(got, codes) {
		t.Errorf("ran %v, want %v", got, codes)
	}
}

func TestDisconnectInterruptsAndKeepsContext(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	resp := ts.post(t, ctx, "/execute", map[string]any{"code": "sleep"})
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // the run has started
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	k := ts.starter.all()[0]
	eventually(t, "interrupt", func() bool { n, _, _ := k.counts(); return n == 1 })
	events := ts.execute(t, map[string]any{"code": "after"})
	if got := types(events); got != "number_of_executions,stdout,end_of_execution" {
		t.Errorf("after interrupt: %s", got)
	}
	if n := len(ts.starter.all()); n != 1 {
		t.Errorf("kernels started = %d, want 1 (interrupt, not restart)", n)
	}
}

func TestStuckKernelIsReplaced(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, func(o *Options) { o.InterruptGrace = 50 * time.Millisecond })
	ctx, cancel := context.WithCancel(t.Context())
	resp := ts.post(t, ctx, "/execute", map[string]any{"code": "block"}) // ignores interrupts
	if _, err := resp.Body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	events := ts.execute(t, map[string]any{"code": "after"}) // queued behind the replacement
	if got := types(events); got != "number_of_executions,stdout,end_of_execution" {
		t.Errorf("after replace: %s", got)
	}
	all := ts.starter.all()
	if len(all) != 2 {
		t.Fatalf("kernels started = %d, want 2", len(all))
	}
	if _, _, shut := all[0].counts(); shut != 1 {
		t.Errorf("stuck kernel shutdowns = %d", shut)
	}
}

func TestKernelDeath(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, func(o *Options) { o.Cwd = "/work dir" })
	events := ts.execute(t, map[string]any{"code": "die"})
	errs := ofType(events, evError)
	if len(errs) != 1 || errs[0]["name"] != errKernelDied || !strings.Contains(errs[0]["value"].(string), "state of this context were lost") {
		t.Fatalf("events = %v", events)
	}
	// The next call is normal and runs on a new kernel moved to the cwd.
	events = ts.execute(t, map[string]any{"code": "again"})
	if got := types(events); got != "number_of_executions,stdout,end_of_execution" {
		t.Errorf("after death: %s", got)
	}
	all := ts.starter.all()
	if len(all) != 2 {
		t.Fatalf("kernels started = %d, want 2", len(all))
	}
	if got := all[1].executed(); !slices.Equal(got, []string{pyChdir("/work dir"), "again"}) {
		t.Errorf("new kernel ran %q", got)
	}
}

func TestKernelDiedWhileIdle(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	ts.starter.all()[0].die()
	// The first call after the silent restart says the state is gone,
	// before the code's own output.
	events := ts.execute(t, map[string]any{"code": "x"})
	if got := types(events); got != "stderr,number_of_executions,stdout,end_of_execution" {
		t.Fatalf("types = %s", got)
	}
	if ev := events[0]; ev["text"] != lostStateNotice("python") || ev["timestamp"] == "" || ev["timestamp"] == nil {
		t.Errorf("notice = %v", ev)
	}
	// Only once per restart.
	if got := types(ts.execute(t, map[string]any{"code": "y"})); got != "number_of_executions,stdout,end_of_execution" {
		t.Errorf("second call types = %s", got)
	}
	if n := len(ts.starter.all()); n != 2 {
		t.Errorf("kernels started = %d, want 2", n)
	}
}

// TestHiddenCodeIsSilent checks that the server's snippets (cwd, global env,
// env_vars save/restore) do not move the execution count the user sees.
func TestHiddenCodeIsSilent(t *testing.T) {
	t.Parallel()
	envd := newEnvd(t, func(string) {})
	ts := newTestServer(t, nil, func(o *Options) { o.EnvdURL = envd })
	bodies := []map[string]any{
		{"code": "one"},
		{"code": "two", "env_vars": map[string]string{"A": "1"}},
		{"code": "three"},
	}
	for i, body := range bodies {
		counts := ofType(ts.execute(t, body), evCount)
		if len(counts) != 1 || counts[0]["execution_count"] != float64(i+1) {
			t.Errorf("run %d: number_of_executions = %v, want %d", i+1, counts, i+1)
		}
	}
	k := ts.starter.all()[0]
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.loudHidden != 0 {
		t.Errorf("%d hidden snippets sent as ordinary executes", k.loudHidden)
	}
}

func TestOutputLimits(t *testing.T) {
	t.Parallel()
	chunks := func(n int, text string) script {
		return func(_ context.Context, _ *fakeKernel, _ string, emit func(*jupyter.Message)) (*jupyter.Message, error) {
			for range n {
				emit(msg("stream", map[string]any{"name": "stdout", "text": text}))
			}
			emit(msg("error", map[string]any{"ename": "E", "evalue": "late", "traceback": []string{}}))
			return errorReply("E", "late"), nil
		}
	}
	t.Run("cap", func(t *testing.T) {
		t.Parallel()
		ts := newTestServer(t, chunks(1000, strings.Repeat("x", 100)), func(o *Options) { o.MaxOutputBytes = 10 << 10 })
		events := ts.execute(t, map[string]any{"code": "flood"})
		var stdout int
		for _, ev := range ofType(events, evStdout) {
			stdout += len(ev["text"].(string))
		}
		stderr := ofType(events, evStderr)
		if len(stderr) != 1 || !strings.HasPrefix(stderr[0]["text"].(string), "[output truncated: this execution produced more than 10 KiB") {
			t.Errorf("stderr = %v", stderr)
		}
		if stdout == 0 || stdout > 10<<10 {
			t.Errorf("stdout bytes = %d", stdout)
		}
		if errs := ofType(events, evError); len(errs) != 1 { // errors still reach the client
			t.Errorf("errors = %v", errs)
		}
	})
	t.Run("dropped kernel message", func(t *testing.T) {
		t.Parallel()
		s := func(_ context.Context, _ *fakeKernel, _ string, emit func(*jupyter.Message)) (*jupyter.Message, error) {
			huge := msg("stream", map[string]any{})
			huge.Dropped = 100 << 20
			emit(huge)
			emit(msg("stream", map[string]any{"name": "stdout", "text": "after\n"}))
			return reply("ok"), nil
		}
		events := newTestServer(t, s, nil).execute(t, map[string]any{"code": "print(big)"})
		stderr, stdout := ofType(events, evStderr), ofType(events, evStdout)
		if len(stderr) != 1 || !strings.HasPrefix(stderr[0]["text"].(string), "[output dropped: the kernel sent 100 MiB in one stream message, over the 32 MiB limit") {
			t.Errorf("stderr = %v", stderr)
		}
		if len(stdout) != 1 || stdout[0]["text"] != "after\n" {
			t.Errorf("stdout = %v", stdout)
		}
	})
	t.Run("long line split", func(t *testing.T) {
		t.Parallel()
		ts := newTestServer(t, chunks(1, strings.Repeat("é", 20)), func(o *Options) { o.MaxLineBytes = 15 })
		events := ofType(ts.execute(t, map[string]any{"code": "x"}), evStdout)
		var joined string
		for _, ev := range events {
			text := ev["text"].(string)
			if len(text) > 15 {
				t.Errorf("line of %d bytes", len(text))
			}
			joined += text
		}
		if len(events) != 3 || joined != strings.Repeat("é", 20) {
			t.Errorf("got %d lines, %q", len(events), joined)
		}
	})
}

func TestKeepalive(t *testing.T) {
	t.Parallel()
	s := func(_ context.Context, _ *fakeKernel, _ string, emit func(*jupyter.Message)) (*jupyter.Message, error) {
		time.Sleep(120 * time.Millisecond)
		emit(msg("stream", map[string]any{"name": "stdout", "text": "late"}))
		return reply("ok"), nil
	}
	ts := newTestServer(t, s, func(o *Options) { o.KeepaliveInterval = 20 * time.Millisecond })
	events := ts.execute(t, map[string]any{"code": "slow"})
	got := types(events)
	if !strings.HasPrefix(got, "keepalive,keepalive") || !strings.HasSuffix(got, "stdout,end_of_execution") {
		t.Errorf("types = %s", got)
	}
}

func TestEnvVarsAppliedAndReverted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		language string
		lang     *language
	}{{"python", languages["python"]}, {"js", languages["javascript"]}, {"bash", languages["bash"]}}
	for _, tc := range tests {
		t.Run(tc.language, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t, nil, func(o *Options) { o.Cwd = "/home/user" })
			env := map[string]string{"B": "it's \"2\"", "A": "1"}
			ts.execute(t, map[string]any{"code": "user", "language": tc.language, "env_vars": env})
			ts.execute(t, map[string]any{"code": "plain", "language": tc.language})
			all := ts.starter.all()
			k := all[len(all)-1]
			want := []string{tc.lang.chdir("/home/user"), tc.lang.saveEnv(env), "user", tc.lang.restoreEnv(env), "plain"}
			if got := k.executed(); !slices.Equal(got, want) {
				t.Errorf("kernel ran\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestGlobalEnvFromEnvd(t *testing.T) {
	t.Parallel()
	var tokens []string
	var mu sync.Mutex
	envd := newEnvd(t, func(token string) {
		mu.Lock()
		tokens = append(tokens, token)
		mu.Unlock()
	})
	ts := newTestServer(t, nil, func(o *Options) { o.EnvdURL = envd })
	ts.execute(t, map[string]any{"code": "one"})
	ts.execute(t, map[string]any{"code": "two"})
	got := ts.starter.all()[0].executed()
	want := []string{pyChdir("/home/user"), pySetEnv(map[string]string{"FROM_ENVD": "yes"}), "one", "two"}
	if !slices.Equal(got, want) {
		t.Errorf("kernel ran %q, want %q", got, want)
	}
	if !slices.Equal(tokens, []string{"tok"}) {
		t.Errorf("envd called with tokens %v, want once with tok", tokens)
	}
}

func TestRequestBodyErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil)
	resp := ts.post(t, t.Context(), "/execute", "not an object")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 {
		t.Errorf("got %d %s", resp.StatusCode, b)
	}
	_ = fmt.Sprint(b)
}
