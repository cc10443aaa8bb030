package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// sdkPackages are the npm packages (package.json names) whose suites run
// against every server: the latest SDK and the last one on the v1 paths.
var sdkPackages = []string{"e2b", "e2b-v250"}

// config is what the environment says about this run; see README.md.
type config struct {
	repoRoot     string
	e2eDir       string
	warrenBin    string
	runtimes     []string
	sdks         []string
	domain       string
	dataDir      string // empty: a fresh temporary dir per server
	logDir       string // empty: a temporary dir; logs are printed on failure
	startTimeout time.Duration
	suiteTimeout time.Duration
	// firstIndex is the index (bridge we2e<n>, subnet 10.231.<n>.0/24) of
	// the first runtime's server; the next runtime takes the next one.
	firstIndex int
}

// minBudget is the least time the suite needs with templates already built.
const minBudget = 15 * time.Minute

// started is when this test binary started: -timeout counts from here.
var started = time.Now()

func TestE2E(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			srv := startServer(t, cfg, cfg.firstIndex+i, rt)
			for j, pkg := range cfg.sdks {
				// The newest SDK runs on every runtime; older ones only on
				// the quickest: what they check is the wire, which the
				// runtime does not change (on runsc the same suite takes
				// three times as long).
				if j > 0 && rt != quickestRuntime(cfg.runtimes) {
					continue
				}
				t.Run(pkg, func(t *testing.T) { runSDKSuite(t, cfg, srv, pkg) })
			}
			t.Run("code-interpreter", func(t *testing.T) {
				if status, _ := srv.call(t, "GET", "/templates/aliases/code-interpreter-v1", ""); status != 200 {
					t.Skip("the server has no code-interpreter-v1 template")
				}
				runNodeSuite(t, cfg, srv, "ci", "e2b")
			})
			t.Run("templates", func(t *testing.T) { runNodeSuite(t, cfg, srv, "template", "e2b") })
			srv.checkNoSandboxes(t)
		})
	}
}

// quickestRuntime is runc when the run includes it, else the run's first.
func quickestRuntime(runtimes []string) string {
	if slices.Contains(runtimes, "runc") {
		return "runc"
	}
	return runtimes[0]
}

// defaultRuntime is the runtime warren serve uses without --runtime if
// the run includes it, else the run's first.
func defaultRuntime(runtimes []string) string {
	for _, rt := range runtimes {
		if rt == "runsc" {
			return rt
		}
	}
	return runtimes[0]
}

// loadConfig reads the environment and skips t when the suite cannot run
// here: not root, no node/npm, no warren binary, too little time, or
// WARREN_E2E=0.
func loadConfig(t *testing.T) config {
	t.Helper()
	// The whole run's -timeout, not what is left of it: a late test of a
	// long run must run (or the run time out, loudly), never skip quietly.
	if deadline, ok := t.Deadline(); ok && deadline.Sub(started) < minBudget {
		t.Skipf("skipping: the end-to-end suite needs at least %v; run go test with a longer -timeout", minBudget)
	}
	return loadConfigTB(t)
}

// loadConfigTB is loadConfig for benchmarks too, which have no deadline.
func loadConfigTB(t testing.TB) config {
	t.Helper()
	if os.Getenv("WARREN_E2E") == "0" {
		t.Skip("skipping: WARREN_E2E=0")
	}
	testutil.RequiresRoot(t)
	testutil.RequiresBinary(t, "node")
	testutil.RequiresBinary(t, "npm")

	e2eDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{
		repoRoot:     filepath.Clean(filepath.Join(e2eDir, "..", "..")),
		e2eDir:       e2eDir,
		runtimes:     splitList(envOr("WARREN_E2E_RUNTIMES", "runc,runsc")),
		sdks:         splitList(envOr("WARREN_E2E_SDKS", strings.Join(sdkPackages, ","))),
		domain:       envOr("WARREN_E2E_DOMAIN", "localhost"),
		dataDir:      os.Getenv("WARREN_E2E_DATA_DIR"),
		logDir:       os.Getenv("WARREN_E2E_LOG_DIR"),
		startTimeout: envDuration(t, "WARREN_E2E_START_TIMEOUT", 10*time.Minute),
		suiteTimeout: envDuration(t, "WARREN_E2E_SUITE_TIMEOUT", 15*time.Minute),
	}
	if v := os.Getenv("WARREN_E2E_INDEX"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 250 {
			t.Fatalf("WARREN_E2E_INDEX=%q: want 0 to 250", v)
		}
		cfg.firstIndex = n
	}
	cfg.warrenBin = warrenBinary(t, cfg.repoRoot)
	installNodeModules(t, e2eDir)
	return cfg
}

// warrenBinary returns WARREN_BIN, or bin/warren built with `make build` if
// it is missing; it skips t when there is nothing to run.
func warrenBinary(t testing.TB, repoRoot string) string {
	t.Helper()
	if bin := os.Getenv("WARREN_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("WARREN_BIN: %v", err)
		}
		return bin
	}
	bin := filepath.Join(repoRoot, "bin", "warren")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("make", "build")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("skipping: bin/warren is missing and make build failed: %v\n%s", err, tail(string(out), 40))
	}
	return bin
}

// installNodeModules runs `npm ci` when node_modules is missing.
func installNodeModules(t testing.TB, e2eDir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(e2eDir, "node_modules")); err == nil {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = e2eDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", e2eDir, err, tail(string(out), 40))
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envDuration(t testing.TB, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
