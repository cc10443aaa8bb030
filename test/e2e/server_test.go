package e2e

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/testutil"
)

const stopTimeout = time.Minute

// harnessClient is the harness's own client for health checks, listing and
// cleanup. It does not verify a --tls server's certificate: the CA exists
// only once the server runs, and the TLS test checks it separately.
var harnessClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
}}

// server is one `warren serve` process this test started.
type server struct {
	url     string // http://127.0.0.1:<port>, for the API and sandbox traffic
	apiKey  string
	dataDir string
	logPath string
	runtime string // the backend sandboxes run on: runc or runsc
	node    string // --node-name of a cluster node, else ""

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	waitErr error         // set before exited is closed
	crashed bool          // it was meant to die (a crash point): no clean exit expected

	// failures are the node runner's reports of failed tests, shown last
	// when the server stops so that a truncated CI log still has them.
	failures []string
}

// startServer starts `warren serve` for runtime rt on a free loopback port
// with a fresh admin key, waits for GET /health to answer 200, and registers
// cleanups that kill leftover sandboxes and stop the server with SIGTERM.
//
// Each server gets its own bridge and subnet (index i), so that it does not
// disturb another warren on the same host, such as a developer's.
func startServer(t *testing.T, cfg config, i int, rt string) *server {
	t.Helper()
	dataDir := ""
	if cfg.dataDir != "" {
		dataDir = filepath.Join(cfg.dataDir, rt)
	}
	// Pauses checkpoint at once, so the SDK suite exercises memory
	// checkpoints on runsc; the freezer path (runc, and runsc before its
	// checkpoint) is what runc runs and TestPausedSurvivesRestart keeps.
	return launchServer(t, cfg, serverOpts{index: i, runtime: rt, dataDir: dataDir, args: []string{"--checkpoint-after=0"}})
}

// serverOpts vary one server from the defaults startServer uses.
type serverOpts struct {
	index   int // picks the bridge name and, unless subnet is set, the subnet
	runtime string
	dataDir string // "" for a fresh temporary dir
	subnet  string // "" for 10.231.<index>.0/24
	apiKey  string // "" for a fresh key
	tls     bool   // serve HTTPS (--tls)
	listen  string // "" for a free port on 127.0.0.1
	args    []string
	env     []string // KEY=VALUE added to the server's environment
	bin     string   // "" for cfg.warrenBin
	netns   string   // run in this named network namespace (/run/netns), "" for the host's
	api     bool     // --role=api: no runtime, bridge, subnet or pool flags
}

// e2eClusterSecret is the cluster secret of the cluster tests' API and
// nodes (o.env may set another).
const e2eClusterSecret = "e2e-cluster-secret-0123456789abcdef"

func launchServer(t testing.TB, cfg config, o serverOpts) *server {
	t.Helper()
	i, rt := o.index, o.runtime
	name := rt
	if o.api {
		name = "api"
	}
	s := &server{apiKey: o.apiKey, dataDir: o.dataDir, logPath: logPath(t, cfg, fmt.Sprintf("%s-%d", name, i)), runtime: rt}
	for _, a := range o.args {
		if v, ok := strings.CutPrefix(a, "--node-name="); ok {
			s.node = v
		}
	}
	if s.apiKey == "" {
		s.apiKey = newAPIKey(t)
	}
	if s.dataDir == "" {
		s.dataDir = t.TempDir()
	}
	if o.subnet == "" {
		o.subnet = fmt.Sprintf("10.231.%d.0/24", i)
	}
	addr := o.listen
	if addr == "" {
		addr = freeLoopbackAddr(t)
	}
	s.url = "http://" + addr
	extra := append([]string(nil), o.args...)
	if o.tls {
		s.url = "https://" + addr
		extra = append(extra, "--tls")
	}

	logFile, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	bin := cfg.warrenBin
	if o.bin != "" {
		bin = o.bin
	}
	argv := append(append([]string{bin}, serveArgs(cfg, o, addr, s.dataDir)...), extra...)
	if o.netns != "" {
		// nsenter switches the network namespace only and execs warren
		// (same PID, for sigkill). Not `ip netns exec`: it also unshares
		// the mount namespace and remounts /sys without the cgroup
		// hierarchy, so runc finds no cgroup mount.
		argv = append([]string{"nsenter", "--net=/run/netns/" + o.netns, "--"}, argv...)
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	// Every cluster member of a test shares the secret; one machine
	// ignores it.
	s.cmd.Env = append(append(os.Environ(), "WARREN_API_KEY="+s.apiKey, "WARREN_CLUSTER_SECRET="+e2eClusterSecret), o.env...)
	s.cmd.Stdout = logFile
	s.cmd.Stderr = logFile
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	s.exited = make(chan struct{})
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(t) })
	t.Logf("warren serve --runtime %s on %s (pid %d, log %s)", rt, s.url, s.cmd.Process.Pid, s.logPath)

	s.waitHealthy(t, cfg.startTimeout)
	t.Cleanup(func() { s.killSandboxes(t) })
	return s
}

// serveArgs are the `warren serve` arguments for o before its own args.
func serveArgs(cfg config, o serverOpts, addr, dataDir string) []string {
	args := []string{"serve", "--listen", addr, "--data-dir", dataDir, "--domain", cfg.domain}
	if o.api {
		return args // the API role runs no sandboxes
	}
	return append(args,
		"--runtime", o.runtime,
		"--bridge", fmt.Sprintf("we2e%d", o.index),
		"--subnet", o.subnet,
		// Pools are on by default; a test that wants one says so (a
		// later flag wins), the others count sandboxes and host
		// resources without pooled ones booting behind them.
		"--pool-size=0",
	)
}

// waitHealthy polls GET /health until it answers 200, the process exits or
// timeout passes.
func (s *server) waitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	// The CA of a --tls server exists only once it runs; health polling
	// does not check it (the TLS test does, separately).
	client := harnessClient
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			t.Fatalf("warren serve exited before it was healthy: %v\n--- server log tail ---\n%s", s.waitErr, s.logTail(60))
		default:
		}
		var res *http.Response
		if res, err = client.Get(s.url + "/health"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("GET /health: %s", res.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("server not healthy after %v: %v\n--- server log tail ---\n%s", time.Since(start).Round(time.Second), err, s.logTail(60))
	}
	t.Logf("healthy after %v", time.Since(start).Round(time.Second))
}

// listedSandbox is the part of a ListedSandbox the leftover check reports.
type listedSandbox struct {
	SandboxID string            `json:"sandboxID"`
	State     string            `json:"state"`
	Metadata  map[string]string `json:"metadata"`
}

// sandboxes lists every sandbox, running or paused.
func (s *server) sandboxes() ([]listedSandbox, error) {
	req, err := http.NewRequest(http.MethodGet, s.url+"/v2/sandboxes?limit=100", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-KEY", s.apiKey)
	res, err := harnessClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v2/sandboxes: %s", res.Status)
	}
	var list []listedSandbox
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("decoding GET /v2/sandboxes: %w", err)
	}
	return list, nil
}

// checkNoSandboxes fails t if sandboxes are still listed once the suites,
// which kill everything they create, are done. Sandboxes that expire on
// their own get a short grace period.
func (s *server) checkNoSandboxes(t *testing.T) {
	t.Helper()
	var left []listedSandbox
	err := testutil.Poll(30*time.Second, time.Second, func() error {
		var err error
		if left, err = s.sandboxes(); err != nil {
			return err
		}
		if len(left) > 0 {
			return errors.New("sandboxes left")
		}
		return nil
	})
	if err != nil {
		t.Errorf("after the suites: %v: %+v", err, left)
	}
}

// killSandboxes deletes whatever sandboxes are left, so that stopping the
// server (which leaves sandboxes running by design) leaks nothing.
func (s *server) killSandboxes(t testing.TB) {
	t.Helper()
	select {
	case <-s.exited:
		return // stopped on purpose; its successor cleans up
	default:
	}
	list, err := s.sandboxes()
	if err != nil {
		t.Logf("listing leftover sandboxes: %v", err)
		return
	}
	for _, sb := range list {
		req, _ := http.NewRequest(http.MethodDelete, s.url+"/sandboxes/"+sb.SandboxID, nil)
		req.Header.Set("X-API-KEY", s.apiKey)
		res, err := harnessClient.Do(req)
		if err != nil {
			t.Logf("deleting leftover sandbox %s: %v", sb.SandboxID, err)
			continue
		}
		res.Body.Close()
	}
}

// stop sends SIGTERM to the server's PID and waits for a clean exit; a server
// that does not exit in time is killed (again by PID) and fails t. It then
// checks that nothing stays mounted under the data dir.
func (s *server) stop(t testing.TB) {
	t.Helper()
	s.terminate(t)
	if mounts := detachMountsUnder(t, s.dataDir); len(mounts) > 0 {
		t.Errorf("mounts left under the data dir after shutdown (now detached): %v", mounts)
	}
	s.removeNodeCgroups()
	if t.Failed() {
		s.report(t)
	}
}

// removeNodeCgroups removes a node's parent cgroup (/warren-<node> in
// each hierarchy) once it is empty: the server keeps it for its next
// start, and a test's node has none. A cgroup that still holds a sandbox
// is not removed (rmdir refuses it).
func (s *server) removeNodeCgroups() {
	if s.node == "" {
		return
	}
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/warren-" + s.node)
	for _, d := range append(dirs, "/sys/fs/cgroup/warren-"+s.node) {
		_ = os.Remove(d)
	}
}

// report logs what a reader of a failed run needs, most important last: the
// server's warnings and errors, the end of its log, and the failed tests.
func (s *server) report(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		t.Logf("server log: %v", err)
	}
	var warns []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			warns = append(warns, line)
		}
	}
	t.Logf("--- server log tail (%s) ---\n%s", s.logPath, tail(string(b), 30))
	t.Logf("--- server warnings and errors (%d, the last 40) ---\n%s", len(warns), tail(strings.Join(warns, "\n"), 40))
	for _, f := range s.failures {
		t.Logf("--- failed ---\n%s", f)
	}
}

// stopLeavingSandboxes stops the server as an upgrade would: its sandboxes
// keep running, with their mounts, for the next server to re-adopt.
func (s *server) stopLeavingSandboxes(t testing.TB) {
	t.Helper()
	s.terminate(t)
}

// terminate sends SIGTERM to the server's PID and waits for a clean exit; a
// server that does not exit in time is killed (again by PID) and fails t.
func (s *server) terminate(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("SIGTERM to warren serve (pid %d): %v", s.cmd.Process.Pid, err)
	}
	select {
	case <-s.exited:
		if s.waitErr != nil && !s.crashed {
			t.Errorf("warren serve after SIGTERM: %v", s.waitErr)
		}
	case <-time.After(stopTimeout):
		t.Errorf("warren serve (pid %d) still running %v after SIGTERM; killing it", s.cmd.Process.Pid, stopTimeout)
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *server) logTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return err.Error()
	}
	return tail(string(b), n)
}

// logPath is where the server for runtime rt logs: WARREN_E2E_LOG_DIR if set
// (kept), else a temporary dir.
func logPath(t testing.TB, cfg config, rt string) string {
	t.Helper()
	dir := cfg.logDir
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "warren-"+rt+".log")
}

// newAPIKey makes an admin key in E2B's format: e2b_ and 40 hex characters.
func newAPIKey(t testing.TB) string {
	t.Helper()
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "e2b_" + hex.EncodeToString(b)
}

func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
