package desktop

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/template/aptlayer"
	"github.com/warren-sandbox/warren/internal/template/base"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// TestEnsureRealBuild builds (or reuses) the real template in the real
// cache dir. The first run downloads about 210 MiB and takes minutes, so it
// runs only when asked: WARREN_TEST_DESKTOP_BUILD=1, as root, with a long
// -timeout.
func TestEnsureRealBuild(t *testing.T) {
	if os.Getenv("WARREN_TEST_DESKTOP_BUILD") != "1" {
		t.Skip("set WARREN_TEST_DESKTOP_BUILD=1 to build the desktop template (minutes, ~210 MiB download)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := aptlayer.LookPath("debootstrap"); err != nil {
		t.Skip(err)
	}
	opts := Options{CacheDir: base.DefaultCacheDir, Progress: testLogWriter{t}}
	start := time.Now()
	rootfs, err := Ensure(t.Context(), opts)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	t.Logf("first Ensure (a build, or a hit if an earlier run built it): %s", time.Since(start).Round(time.Millisecond))
	if left, err := cachedfs.MountsUnder(filepath.Join(base.DefaultCacheDir, "templates")); err != nil || len(left) > 0 {
		t.Errorf("mounts left under the cache: %v %v", left, err)
	}
	start = time.Now()
	again, err := Ensure(t.Context(), opts)
	if err != nil || again != rootfs {
		t.Fatalf("second Ensure = %q, %v; want %q", again, err, rootfs)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second Ensure took %s, want a cache hit", d)
	}
	_, m, err := Inspect(opts)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	t.Logf("rootfs %s: %d installed packages, %s, built in %.0fs",
		rootfs, len(m.Installed), cachedfs.HumanBytes(m.SizeBytes), m.BuildSeconds)
	checkInstalled(t, rootfs, m)
	checkDisplay(t, rootfs)
}

// checkInstalled looks for every command the SDK runs and for the config
// files.
func checkInstalled(t *testing.T, rootfs string, m *Marker) {
	for _, p := range Packages {
		if !slices.ContainsFunc(m.Installed, func(nv string) bool { return strings.HasPrefix(nv, p+"=") }) {
			t.Errorf("package %s not installed", p)
		}
	}
	for _, bin := range []string{"Xvfb", "xdpyinfo", "startxfce4", "xfce4-session", "xfwm4", "xfdesktop",
		"xfce4-panel", "dbus-launch", "xdotool", "scrot", "xrandr", "xset", "xdg-open", "gtk-launch", "x11vnc",
		"websockify", "netstat", "firefox-esr", "xfce4-terminal", "mousepad"} {
		if _, err := os.Stat(filepath.Join(rootfs, "usr/bin", bin)); err != nil {
			t.Errorf("/usr/bin/%s: %v", bin, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(rootfs, "opt/noVNC")); err != nil || target != "/usr/share/novnc" {
		t.Errorf("/opt/noVNC -> %q, %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(rootfs, "usr/share/novnc/utils/novnc_proxy")); err != nil {
		t.Error(err)
	}
	for _, f := range configFiles {
		if f.link != "" {
			continue
		}
		got, err := os.ReadFile(filepath.Join(rootfs, f.name))
		if err != nil || string(got) != string(f.data) {
			t.Errorf("/%s: %v\n%s", f.name, err, got)
		}
	}
}

// checkDisplay starts Xvfb in the rootfs the way the SDK does and asks it
// for its size, in private namespaces (the abstract X socket lives in the
// network namespace) with a tmpfs /tmp, so the cached tree is not written.
func checkDisplay(t *testing.T, rootfs string) {
	const script = `set -eu
R=$1
mount -t proc proc "$R/proc"
mount -t tmpfs tmpfs "$R/tmp"
chroot "$R" /bin/sh -c '
Xvfb :0 -ac -screen 0 1024x768x24 -retro -dpi 96 -nolisten tcp -nolisten unix >/tmp/xvfb.log 2>&1 &
i=0
until xdpyinfo -display :0 >/dev/null 2>&1; do
	i=$((i+1)); [ $i -lt 40 ] || { cat /tmp/xvfb.log; exit 1; }; sleep 0.25
done
DISPLAY=:0 xrandr | head -1
DISPLAY=:0 xset s off -dpms && echo xset-ok
'`
	cmd := exec.CommandContext(t.Context(), "unshare", "--mount", "--propagation", "private", "--pid", "--fork",
		"--net", "--", "/bin/sh", "-c", script, "sh", rootfs)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "current 1024 x 768") || !strings.Contains(string(out), "xset-ok") {
		t.Errorf("Xvfb in the rootfs: %v\n%s", err, out)
	}
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
