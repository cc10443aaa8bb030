package base

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// TestEnsureRealBuild builds (or reuses) the real base template in the real
// cache dir, because a first build downloads ~90 MB and takes minutes; later
// runs are cache hits. Run it with a long -timeout.
func TestEnsureRealBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Debian rootfs; minutes on the first run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := debootstrapPath(); err != nil {
		t.Skip(err)
	}
	opts := Options{CacheDir: DefaultCacheDir, Progress: &testLogWriter{t: t}}
	start := time.Now()
	rootfs, err := Ensure(t.Context(), opts)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	t.Logf("first Ensure (a build, or a hit if an earlier run built it): %s", time.Since(start).Round(time.Millisecond))

	assertNoMountsUnder(t, filepath.Join(DefaultCacheDir, "templates"))
	checkRootfs(t, rootfs)

	start = time.Now()
	again, err := Ensure(t.Context(), opts)
	if err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second Ensure took %s, want a cache hit", d)
	}
	if again != rootfs {
		t.Errorf("second Ensure = %q, want %q", again, rootfs)
	}
	_, m, err := Inspect(opts)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	t.Logf("rootfs %s: %d installed packages, %s, built in %.0fs", rootfs, len(m.Installed), cachedfs.HumanBytes(m.SizeBytes), m.BuildSeconds)
	if m.SizeBytes < 100<<20 || m.SizeBytes > 1<<30 {
		t.Errorf("recorded size %d bytes is implausible", m.SizeBytes)
	}
}

func checkRootfs(t *testing.T, rootfs string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(rootfs, "home/user"), &st); err != nil {
		t.Fatalf("stat /home/user: %v", err)
	}
	if st.Uid != userUID || st.Gid != userGID {
		t.Errorf("/home/user owned by %d:%d, want 1000:1000", st.Uid, st.Gid)
	}
	for _, f := range []string{".bashrc", ".profile", "../../.warren", "../../etc/resolv.conf"} {
		if _, err := os.Lstat(filepath.Join(rootfs, "home/user", f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	fi, err := os.Stat(filepath.Join(rootfs, "etc/sudoers.d/user"))
	if err != nil || fi.Mode().Perm() != 0o440 {
		t.Errorf("sudoers drop-in: %v, mode %v", err, fi.Mode())
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"/usr/bin/python3", "-c", "print(1)"}, "1"},
		{[]string{"id", "user"}, "uid=1000(user) gid=1000(user) groups=1000(user),27(sudo)"},
		{[]string{"visudo", "-c"}, "parsed OK"},
		{[]string{"node", "-e", "console.log(6*7)"}, "42"},
		{[]string{"python", "-c", "import venv, pip; print('ok')"}, "ok"},
		{[]string{"git", "--version"}, "git version"},
		{[]string{"jq", "--version"}, "jq-"},
		{[]string{"sh", "-c", "pip3 config list"}, "global.break-system-packages='true'"},
	}
	for _, c := range cases {
		t.Run(c.args[0], func(t *testing.T) {
			out, err := chrootOutput(rootfs, c.args...)
			if err != nil || !strings.Contains(out, c.want) {
				t.Errorf("chroot %v: %v\n%s\nwant output containing %q", c.args, err, out, c.want)
			}
		})
	}
}

// chrootOutput runs a read-only command in rootfs. Nothing is mounted, and
// nothing the commands do writes to the tree, because the cache is shared.
func chrootOutput(rootfs string, args ...string) (string, error) {
	cmd := exec.Command("chroot", append([]string{rootfs}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/root", "PYTHONDONTWRITEBYTECODE=1"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func assertNoMountsUnder(t *testing.T, dir string) {
	t.Helper()
	dir, err := cachedfs.RealPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	left, err := cachedfs.MountsUnder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("mounts left under %s: %v", dir, left)
	}
}

// testLogWriter sends each progress line to t.Log, so -v shows a build
// moving as it happens.
type testLogWriter struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *testLogWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(b), nil
		}
		w.t.Log(strings.TrimSuffix(line, "\n"))
	}
}
