package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestHostCleanup proves on the host that kill frees everything a sandbox
// held: 50 create/kill cycles, then no mount, netns, bridge port, cgroup,
// state dir or process of any of them is left.
func TestHostCleanup(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			s := launchServer(t, cfg, serverOpts{index: 10 + i, runtime: rt})
			var mu sync.Mutex
			var ids []string
			for round := range 10 {
				var wg sync.WaitGroup
				for range 5 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						id := s.createSandbox(t, `{"templateID":"base","timeout":120}`)
						s.expectEnvdHealth(t, id, http.StatusNoContent)
						s.mustCall(t, "DELETE", "/sandboxes/"+id, "", http.StatusNoContent)
						mu.Lock()
						ids = append(ids, id)
						mu.Unlock()
					}()
				}
				wg.Wait()
				if t.Failed() {
					t.Fatalf("round %d failed", round)
				}
			}
			s.checkHostFree(t, rt, fmt.Sprintf("we2e%d", 10+i), ids)
			// With no sandbox left, a clean stop leaves nothing in
			// /run/warren: a lock file runsc remade after a kill would
			// keep the run root.
			s.stop(t)
			if _, err := os.Lstat(runRootOf(s.dataDir)); !os.IsNotExist(err) {
				left, _ := filepath.Glob(filepath.Join(runRootOf(s.dataDir), "*", "*"))
				t.Errorf("run root %s outlived a clean stop with no sandbox (err %v): %v", runRootOf(s.dataDir), err, left)
			}
		})
	}
}

// runRootOf is the runtimes' state root of the server on dataDir:
// /run/warren/<first 6 bytes of the sha256 of its absolute path, in hex>.
func runRootOf(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join("/run/warren", hex.EncodeToString(sum[:6]))
}

// TestRestartReadopts stops the server with sandboxes running, kills one
// sandbox's processes while it is down, and checks that the next start
// re-adopts the live one (same files, same token) and forgets and frees the
// dead one.
func TestRestartReadopts(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			o := serverOpts{index: 20 + i, runtime: rt, dataDir: t.TempDir()}
			s := launchServer(t, cfg, o)
			live := s.createSandbox(t, `{"templateID":"base","timeout":600}`)
			dead := s.createSandbox(t, `{"templateID":"base","timeout":600}`)
			s.uploadFile(t, live, "/home/user/kept.txt", "still here")
			s.stopLeavingSandboxes(t)

			killSandboxProcesses(t, dead)
			o.apiKey = s.apiKey
			s2 := launchServer(t, cfg, o)
			s2.expectEnvdHealth(t, live, http.StatusNoContent)
			if got := s2.downloadFile(t, live, "/home/user/kept.txt"); got != "still here" {
				t.Fatalf("file after restart = %q", got)
			}
			s2.mustCall(t, "GET", "/sandboxes/"+dead, "", http.StatusNotFound)
			s2.expectEnvdHealth(t, dead, http.StatusBadGateway)
			s2.mustCall(t, "DELETE", "/sandboxes/"+live, "", http.StatusNoContent)
			s2.checkHostFree(t, rt, fmt.Sprintf("we2e%d", 20+i), []string{live, dead})
		})
	}
}

// TestAddressExhaustion fills a tiny subnet: the create that finds no free
// address gets a clear 503 and leaves nothing behind.
func TestAddressExhaustion(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[0]
	// A /29 has 8 addresses: network, gateway, broadcast and 5 for sandboxes.
	s := launchServer(t, cfg, serverOpts{index: 30, runtime: rt, subnet: "10.230.0.0/29"})
	var ids []string
	for {
		status, body := s.call(t, "POST", "/v2/sandboxes", `{"templateID":"base","timeout":120}`)
		if status == http.StatusCreated {
			var sb struct{ SandboxID string }
			_ = json.Unmarshal(body, &sb)
			ids = append(ids, sb.SandboxID)
			if len(ids) > 8 {
				t.Fatalf("created %d sandboxes in a /29", len(ids))
			}
			continue
		}
		if status != http.StatusServiceUnavailable || !bytes.Contains(body, []byte(`"code":503`)) {
			t.Fatalf("create on a full subnet: %d %s; want 503 with the E2B error body", status, body)
		}
		t.Logf("after %d sandboxes: %s", len(ids), body)
		break
	}
	for _, id := range ids {
		s.mustCall(t, "DELETE", "/sandboxes/"+id, "", http.StatusNoContent)
	}
	again := s.createSandbox(t, `{"templateID":"base","timeout":60}`) // addresses came back
	s.mustCall(t, "DELETE", "/sandboxes/"+again, "", http.StatusNoContent)
	s.checkHostFree(t, rt, "we2e30", append(ids, again))
}

func (s *server) call(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", s.apiKey)
	res, err := harnessClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, data
}

func (s *server) mustCall(t *testing.T, method, path, body string, want int) []byte {
	t.Helper()
	status, data := s.call(t, method, path, body)
	if status != want {
		t.Errorf("%s %s = %d %s; want %d", method, path, status, data, want)
	}
	return data
}

func (s *server) createSandbox(t *testing.T, body string) string {
	t.Helper()
	var sb struct {
		SandboxID string `json:"sandboxID"`
	}
	if err := json.Unmarshal(s.mustCall(t, "POST", "/v2/sandboxes", body, http.StatusCreated), &sb); err != nil || sb.SandboxID == "" {
		t.Fatalf("create: %v", err)
	}
	return sb.SandboxID
}

// envdRequest sends a request to the sandbox's envd through warren's proxy,
// with the sandbox's access token.
func (s *server) envdRequest(t *testing.T, id, method, path string, body io.Reader) (int, []byte) {
	t.Helper()
	return s.envdRequestType(t, id, method, path, "", body)
}

func (s *server) envdRequestType(t *testing.T, id, method, path, contentType string, body io.Reader) (int, []byte) {
	t.Helper()
	var info struct {
		EnvdAccessToken string `json:"envdAccessToken"`
	}
	if status, data := s.call(t, "GET", "/sandboxes/"+id, ""); status == http.StatusOK {
		_ = json.Unmarshal(data, &info)
	}
	req, _ := http.NewRequest(method, s.url+path, body)
	req.Header.Set("E2b-Sandbox-Id", id)
	req.Header.Set("E2b-Sandbox-Port", "49983")
	req.Header.Set("X-Access-Token", info.EnvdAccessToken)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := harnessClient.Do(req)
	if err != nil {
		t.Fatalf("envd %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, data
}

func (s *server) expectEnvdHealth(t *testing.T, id string, want int) {
	t.Helper()
	if status, data := s.envdRequest(t, id, "GET", "/health", nil); status != want {
		t.Errorf("envd /health of %s = %d %s; want %d", id, status, data, want)
	}
}

func (s *server) uploadFile(t *testing.T, id, path, content string) {
	t.Helper()
	req := "/files?path=" + path
	if status, data := s.envdRequest(t, id, "POST", req, strings.NewReader(content)); status != http.StatusOK {
		t.Fatalf("upload: %d %s", status, data)
	}
}

func (s *server) downloadFile(t *testing.T, id, path string) string {
	t.Helper()
	status, data := s.envdRequest(t, id, "GET", "/files?path="+path, nil)
	if status != http.StatusOK {
		t.Fatalf("download: %d %s", status, data)
	}
	return string(data)
}

// checkHostFree fails t if anything of the given sandboxes is left on the
// host, or anything is still attached to the server's bridge.
func (s *server) checkHostFree(t *testing.T, rt, bridge string, ids []string) {
	t.Helper()
	if ports, _ := os.ReadDir(filepath.Join("/sys/class/net", bridge, "brif")); len(ports) > 0 {
		t.Errorf("ports left on bridge %s: %d", bridge, len(ports))
	}
	for _, id := range ids {
		var left []string
		if m, _ := mountPointsUnder(filepath.Join(s.dataDir, "sandboxes")); len(m) > 0 {
			left = append(left, fmt.Sprint("mounts ", m))
		}
		for _, p := range []string{"/run/netns/" + bridge + "-" + id, filepath.Join(s.dataDir, "sandboxes", rt, id)} {
			if _, err := os.Lstat(p); err == nil {
				left = append(left, p)
			}
		}
		// The runtime's own state: runc's <id>/, runsc's
		// <id>_sandbox:<id>.state and .lock.
		runtimeState, _ := filepath.Glob(filepath.Join(runRootOf(s.dataDir), rt, id+"*"))
		left = append(left, runtimeState...)
		cgs, _ := filepath.Glob("/sys/fs/cgroup/*/warren/" + id)
		cg2, _ := filepath.Glob("/sys/fs/cgroup/warren/" + id)
		left = append(append(left, cgs...), cg2...)
		if pids := pidsOf(id); len(pids) > 0 {
			left = append(left, fmt.Sprint("processes ", pids))
		}
		if len(left) > 0 {
			t.Errorf("sandbox %s left: %v", id, left)
		}
	}
}

// pidsOf finds host processes of a sandbox: in its cgroup, or naming it on
// their command line (runsc's sandbox and gofer).
func pidsOf(id string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if isZombie(e.Name()) {
			continue // exited; its parent (often the host's init) reaps it
		}
		cg, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cg, []byte("/warren/"+id)) || bytes.Contains(cmd, []byte(id)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func isZombie(pid string) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return true // gone
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z'
}

// killSandboxProcesses SIGKILLs every host process of a sandbox, as a crash
// or an OOM kill of the whole sandbox would, and waits until they are gone.
func killSandboxProcesses(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pids := pidsOf(id)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of %s survive SIGKILL: %v", id, pids)
		}
		for _, p := range pids {
			var pid int
			fmt.Sscan(p, &pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestUploadDiskFull uploads more than fits in the sandbox's 64 MiB /dev/shm:
// envd answers 507 with E2B's error body, and the sandbox keeps working.
func TestUploadDiskFull(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			s := launchServer(t, cfg, serverOpts{index: 50 + i, runtime: rt})
			id := s.createSandbox(t, `{"templateID":"base","timeout":120}`)
			body := io.LimitReader(zeros{}, 80<<20)
			status, data := s.envdRequestType(t, id, "POST", "/files?path=/dev/shm/big&username=root", "application/octet-stream", body)
			if status != http.StatusInsufficientStorage || !bytes.Contains(data, []byte(`"code":507`)) {
				t.Fatalf("upload past a full disk = %d %s; want 507 with the E2B error body", status, data)
			}
			s.uploadFile(t, id, "/home/user/after.txt", "ok")
			if got := s.downloadFile(t, id, "/home/user/after.txt"); got != "ok" {
				t.Fatalf("after a full disk: %q", got)
			}
			s.mustCall(t, "DELETE", "/sandboxes/"+id, "", http.StatusNoContent)
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
