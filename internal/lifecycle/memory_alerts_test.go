package lifecycle

import (
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
)

// TestMemoryAlertsWakeTheGuard: on a backend with memory alerts, envd is
// started to wait for them, and each alert reaches its OOM guard (with
// the sandbox's token); a paused and resumed sandbox is watched again.
func TestMemoryAlertsWakeTheGuard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.b.WithMemoryAlerts()
	sb := e.create(t, sandbox.CreateRequest{Secure: true})
	if args := e.b.InitArgs(sb.ID); !slices.Contains(args, "--oom-guard-on-wake") {
		t.Fatalf("envd args %v lack --oom-guard-on-wake", args)
	}
	waitChecks := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			e.envd.mu.Lock()
			got := slices.Clone(e.envd.checks)
			e.envd.mu.Unlock()
			if len(got) >= n {
				if got[n-1] != sb.EnvdAccessToken {
					t.Fatalf("memory check sent with token %q", got[n-1])
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("fewer than %d memory checks reached envd", n)
	}
	if !e.b.AlertMemory(sb.ID) {
		t.Fatal("nobody watches the sandbox's memory")
	}
	waitChecks(1)
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitCheckpointed(t, e, sb.ID)
	if e.b.AlertMemory(sb.ID) {
		t.Fatal("a paused (stopped) sandbox's memory is still watched")
	}
	if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err != nil {
		t.Fatal(err)
	}
	if !e.b.AlertMemory(sb.ID) {
		t.Fatal("the resumed sandbox's memory is not watched")
	}
	waitChecks(2)
}

// TestOOMGuardMeasuresTheRightMemory: every sandbox's envd runs the OOM
// guard; on a backend without a kernel of its own (runc) it measures the
// sandbox's memory cgroup, since /proc/meminfo there is the host's.
func TestOOMGuardMeasuresTheRightMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		ownKernel  bool
		wantCgroup bool
	}{{"host kernel", false, true}, {"own kernel", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.ownKernel {
				e.b.WithMemoryAlerts()
			}
			sb := e.create(t, sandbox.CreateRequest{})
			args := e.b.InitArgs(sb.ID)
			if !slices.Contains(args, "--oom-guard") {
				t.Errorf("envd args %v lack --oom-guard", args)
			}
			if got := slices.Contains(args, "--oom-guard-cgroup=/sys/fs/cgroup"); got != tc.wantCgroup {
				t.Errorf("envd args %v: cgroup meter %v, want %v", args, got, tc.wantCgroup)
			}
			if got := slices.Contains(args, "--reserve-threads=32"); got != tc.wantCgroup {
				t.Errorf("envd args %v: thread reserve %v, want it only where pids count envd's threads", args, got)
			}
		})
	}
}
