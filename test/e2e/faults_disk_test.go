package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestDataDirFull puts the data dir on a small filesystem of its own and
// fills it: creates and template builds get a clear error naming the
// disk, a running sandbox keeps answering, the store keeps answering and
// a restart on the full disk opens it and re-adopts the sandbox; once
// space is freed, creates and builds work again, and killing everything
// and a clean stop leave nothing behind.
func TestDataDirFull(t *testing.T) {
	cfg := loadConfig(t)
	disk := t.TempDir()
	if err := unix.Mount("tmpfs", disk, "tmpfs", 0, "size=160m"); err != nil {
		t.Skipf("mounting a small tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(disk, unix.MNT_DETACH) })
	// The restarted server listens where the first did, so the sandbox
	// handle made before stays valid, as a client's would.
	o := serverOpts{index: 203, runtime: cfg.runtimes[0], dataDir: filepath.Join(disk, "data"), apiKey: newAPIKey(t),
		listen: freeLoopbackAddr(t), args: faultArgs("--default-disk=32")}
	s := launchServer(t, cfg, o)
	c := goClient(t, cfg, s)
	ctx := t.Context()
	sb, err := createRetrying(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Files.Write(ctx, "/home/user/kept.txt", []byte("kept"), warren.FileOptions{}); err != nil {
		t.Fatal(err)
	}

	fillDisk(t, disk)
	t.Run("full", func(t *testing.T) { checkFull(t, s, c, sb) })
	// The store opens on a full disk, and the sandbox is re-adopted. The
	// start frees a little (its spare sandbox disks): fill that too.
	s.stopLeavingSandboxes(t)
	s = launchServer(t, cfg, o)
	c = goClient(t, cfg, s)
	fillDisk(t, disk)
	t.Run("full after a restart", func(t *testing.T) { checkFull(t, s, c, sb) })

	fillers, _ := filepath.Glob(filepath.Join(disk, "filler-*"))
	for _, f := range fillers {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("space again", func(t *testing.T) {
		again, err := createRetrying(t.Context(), c)
		if err != nil {
			t.Fatalf("create once space is back: %v", err)
		}
		s.mustCall(t, "DELETE", "/sandboxes/"+again.ID, "", http.StatusNoContent)
		st := s.buildTemplate(t, "after-full", map[string]any{"fromTemplate": "base",
			"steps": []map[string]any{{"type": "RUN", "args": []string{"echo fine > /f", "root"}}}})
		if st["status"] != "ready" {
			b, _ := json.Marshal(st)
			t.Errorf("a build once space is back: %s", b)
		}
	})
	s.mustCall(t, "DELETE", "/sandboxes/"+sb.ID, "", http.StatusNoContent)
	s.stop(t)
	checkServerGone(t, s, "we2e203")
}

// fillDisk fills the filesystem at dir to its last block with a file
// beside the data dir, dir/filler-*.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.CreateTemp(dir, "filler-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, int64(st.Bavail)*st.Bsize); err != nil && !errors.Is(err, unix.ENOSPC) {
		t.Fatal(err)
	}
	// Whatever fallocate left (it may stop a little short).
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	_ = unix.Statfs(dir, &st)
	t.Logf("disk filled: %d blocks free", st.Bavail)
}

// checkFull checks a server whose data dir is full: a create and a build
// are refused with a message about disk space, and sandbox sb, the list
// and the store still answer.
func checkFull(t *testing.T, s *server, c *warren.Client, sb *warren.Sandbox) {
	id := sb.ID
	for _, tc := range []struct {
		name  string
		check func(t *testing.T)
	}{
		{"create refused", func(t *testing.T) {
			status, body := s.call(t, "POST", "/v2/sandboxes", `{"templateID":"base","timeout":60}`)
			// A busy host's 503 comes first; the disk's is the one asked about.
			for end := time.Now().Add(time.Minute); status == http.StatusServiceUnavailable && !bytes.Contains(body, []byte("disk")) && time.Now().Before(end); {
				time.Sleep(time.Second)
				status, body = s.call(t, "POST", "/v2/sandboxes", `{"templateID":"base","timeout":60}`)
			}
			wantDiskError(t, status, body)
		}},
		{"build refused", func(t *testing.T) { wantBuildRefused(t, s) }},
		{"sandbox answers", func(t *testing.T) {
			res, err := sb.Commands.Run(t.Context(), "cat /home/user/kept.txt; echo -n ' alive'", warren.CommandOptions{Timeout: 30 * time.Second})
			if err != nil || res.Stdout != "kept alive" {
				t.Errorf("command in the running sandbox: %+v, %v", res, err)
			}
			if data, err := sb.Files.Read(t.Context(), "/home/user/kept.txt", warren.FileOptions{}); err != nil || string(data) != "kept" {
				t.Errorf("download from the running sandbox: %q, %v", data, err)
			}
		}},
		{"connect answers or says why", func(t *testing.T) {
			// Connecting records a longer timeout: it may be refused
			// for the disk, clearly, but not fail otherwise.
			_, err := c.Connect(t.Context(), id, 10*time.Minute)
			var apiErr *warren.APIError
			if errors.As(err, &apiErr) {
				wantDiskError(t, apiErr.Status, []byte(fmt.Sprintf(`{"code":%d,"message":%q}`, apiErr.Status, apiErr.Message)))
			} else if err != nil {
				t.Errorf("connect: %v", err)
			}
		}},
		{"store answers", func(t *testing.T) {
			list := listAll(t.Context(), t, c)
			if list[id] != "running" || len(list) != 1 {
				t.Errorf("listed %v; want %s running", list, id)
			}
			s.mustCall(t, "GET", "/templates", "", http.StatusOK)
		}},
	} {
		t.Run(tc.name, tc.check)
	}
}

// wantDiskError fails t unless status and body are a 507 or 503 in E2B's
// error shape whose message speaks of disk space.
func wantDiskError(t *testing.T, status int, body []byte) {
	t.Helper()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &e)
	if (status != http.StatusInsufficientStorage && status != http.StatusServiceUnavailable) || e.Code != status ||
		!strings.Contains(strings.ToLower(e.Message), "disk") {
		t.Errorf("on a full data dir: %d %s; want 507 or 503 in E2B's error shape, naming the disk", status, body)
		return
	}
	t.Logf("refused: %d %s", status, e.Message)
}

// wantBuildRefused starts a build on the full disk: the start itself is
// refused, or the build fails with a reason naming the disk.
func wantBuildRefused(t *testing.T, s *server) {
	t.Helper()
	var rb struct{ TemplateID, BuildID string }
	status, body := s.call(t, "POST", "/v3/templates", `{"name":"on-full-disk"}`)
	if status != http.StatusAccepted {
		wantDiskError(t, status, body)
		return
	}
	_ = json.Unmarshal(body, &rb)
	req := `{"fromTemplate":"base","steps":[{"type":"RUN","args":["echo x > /x","root"]}]}`
	status, body = s.call(t, "POST", "/v2/templates/"+rb.TemplateID+"/builds/"+rb.BuildID, req)
	if status != http.StatusAccepted {
		wantDiskError(t, status, body)
		return
	}
	st := s.waitBuild(t, rb.TemplateID, rb.BuildID, func(st map[string]any, _ string) bool {
		return st["status"] == "ready" || st["status"] == "error"
	})
	if st["status"] != "error" || !strings.Contains(strings.ToLower(reason(st)), "disk") {
		t.Errorf("build on a full data dir: %v, reason %q; want it refused for disk space", st["status"], reason(st))
	}
}
