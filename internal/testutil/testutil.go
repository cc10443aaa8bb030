// Package testutil holds helpers shared by warren's tests: skip helpers for
// tests that need root or a host binary, and polling for conditions that
// become true asynchronously. Only _test.go files and *test packages import
// it, so it may depend on package testing.
package testutil

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"strings"
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

// runscCandidates are where runsc may be installed: the project's setup
// builds it into /var/cache/warren/gobin; gobin-static holds a
// CGO_ENABLED=0 build for hosts where that one came out dynamically linked.
// The WARREN_RUNSC environment variable overrides both.
func runscCandidates() []string {
	if p := os.Getenv("WARREN_RUNSC"); p != "" {
		return []string{p}
	}
	return []string{"/var/cache/warren/gobin/runsc", "/var/cache/warren/gobin-static/runsc"}
}

// RequiresRunsc skips t unless a usable runsc is installed, and returns its
// path. runsc must be statically linked: it re-executes itself inside an
// empty chroot, where a dynamically linked build cannot start.
func RequiresRunsc(t testing.TB) string {
	t.Helper()
	var why []string
	for _, p := range runscCandidates() {
		resolved, err := exec.LookPath(p)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		if err := checkStatic(resolved); err != nil {
			why = append(why, err.Error())
			continue
		}
		return resolved
	}
	t.Skipf("skipping: no usable runsc: %s", strings.Join(why, "; "))
	return ""
}

// checkStatic fails for an ELF binary with a dynamic loader.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (build it with CGO_ENABLED=0)", path)
		}
	}
	return nil
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
