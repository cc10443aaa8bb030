package e2e

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestWarmPool: with --pool-size=1 on the default runtime, base's pool is
// filled before any create (--pool-templates), the first create takes
// the pooled sandbox, the pool refills, and the next create takes the
// new one. Nothing of the first sandbox reaches it (its env var, a file,
// a running process), it has its own env vars, and when the server stops
// it destroys the sandbox still waiting in the pool.
func TestWarmPool(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[len(cfg.runtimes)-1]
	s := launchServer(t, cfg, serverOpts{index: 121, runtime: rt, args: []string{"--pool-size=1", "--pool-templates=base", "--log-level=debug"}})
	c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{Timeout: 2 * time.Minute}}
	ctx := t.Context()
	waitLog(t, s, "pooled sandbox ready") // before any create

	a, err := c.Create(ctx, "base", &warren.CreateOptions{EnvVars: map[string]string{"CLAIM": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	waitLog(t, s, `msg="sandbox created from the pool" sandbox=`+a.ID)
	if res, err := a.Run(ctx, "user", "echo a > /tmp/a-was-here; (sleep 1000 >/dev/null 2>&1 &); echo $CLAIM"); err != nil || strings.TrimSpace(res.Stdout) != "a" {
		t.Fatalf("in a: %v %v", res, err)
	}
	waitLog(t, s, "hits=1 misses=0") // the refill after a's claim

	b, err := c.Create(ctx, "base", &warren.CreateOptions{EnvVars: map[string]string{"CLAIM": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID == a.ID {
		t.Fatal("the second create got the first sandbox")
	}
	waitLog(t, s, `msg="sandbox created from the pool" sandbox=`+b.ID)
	res, err := b.Run(ctx, "user", "echo $CLAIM; ls /tmp; ps -eo args")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("in b: %v %v", res, err)
	}
	if lines := strings.Split(res.Stdout, "\n"); lines[0] != "b" {
		t.Errorf("b's CLAIM is %q, want b", lines[0])
	}
	for _, leak := range []string{"a-was-here", "sleep 1000"} {
		if strings.Contains(res.Stdout, leak) {
			t.Errorf("b has %q from a:\n%s", leak, res.Stdout)
		}
	}
	a.Kill(ctx)
	b.Kill(ctx)
	waitLog(t, s, "hits=2 misses=0") // the refill after b's claim
	// stop fails the test if a mount is left under the data dir: the
	// pooled sandbox's rootfs, had the server left it running.
	s.stop(t)
}

// waitLog waits until the server's log has want.
func waitLog(t *testing.T, s *server, want string) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, func() error {
		data, _ := os.ReadFile(s.logPath)
		if !strings.Contains(string(data), want) {
			return os.ErrNotExist
		}
		return nil
	})
}
