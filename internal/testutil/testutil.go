// Package testutil holds helpers shared by warren's tests: skip helpers for
// tests that need root or a host binary, and polling for conditions that
// become true asynchronously. Only _test.go files and *test packages import
// it, so it may depend on package testing.
package testutil

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// DisableRootTestsEnv names an environment variable that, when set to any
// non-empty value, skips root-only tests even when running as root. It lets a
// developer run the quick suite on a host where root tests would disturb
// something.
const DisableRootTestsEnv = "WARREN_DISABLE_ROOT_TESTS"

// RequiresRoot skips t unless the test runs as uid 0 and root tests are not
// disabled through DisableRootTestsEnv.
func RequiresRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: requires root")
	}
	if os.Getenv(DisableRootTestsEnv) != "" {
		t.Skipf("skipping: %s is set", DisableRootTestsEnv)
	}
}

// RequiresBinary skips t unless path (absolute, or a name looked up in PATH)
// is an executable, and returns its resolved path.
func RequiresBinary(t testing.TB, path string) string {
	t.Helper()
	resolved, err := exec.LookPath(path)
	if err != nil {
		t.Skipf("skipping: %s not available: %v", path, err)
	}
	return resolved
}

// RunscPath is where the project's setup builds gVisor's runsc; the
// WARREN_RUNSC environment variable overrides it.
func RunscPath() string {
	if p := os.Getenv("WARREN_RUNSC"); p != "" {
		return p
	}
	return "/var/cache/warren/gobin/runsc"
}

// RequiresRunsc skips t unless runsc is installed, and returns its path.
func RequiresRunsc(t testing.TB) string {
	t.Helper()
	return RequiresBinary(t, RunscPath())
}

// RequiresRunc skips t unless runc is installed, and returns its path.
func RequiresRunc(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("WARREN_RUNC"); p != "" {
		return RequiresBinary(t, p)
	}
	return RequiresBinary(t, "runc")
}

// Poll calls cond every interval until it returns nil or timeout passes, and
// returns cond's last error (nil on success). Use it for state that settles
// asynchronously (a port starting to listen, a process exiting).
func Poll(timeout, interval time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(interval)
	}
}

// Eventually fails t if cond does not return nil within timeout.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	if err := Poll(timeout, 10*time.Millisecond, cond); err != nil {
		t.Fatalf("condition not met within %v: %v", timeout, err)
	}
}
