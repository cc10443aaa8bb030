package codeinterp

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/template/aptlayer"
	"github.com/warren-sandbox/warren/internal/template/base"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// TestEnsureRealBuild builds (or reuses) the real template in the real
// cache dir, as base's test does: the first run downloads a few hundred MB
// and takes minutes; later runs are cache hits. Run it with a long -timeout.
func TestEnsureRealBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Debian rootfs; minutes on the first run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := aptlayer.LookPath("debootstrap"); err != nil {
		t.Skip(err)
	}
	opts := Options{CacheDir: base.DefaultCacheDir, Progress: &testLogWriter{t: t}}
	start := time.Now()
	rootfs, err := Ensure(t.Context(), opts)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	t.Logf("first Ensure (a build, or a hit if an earlier run built it): %s", time.Since(start).Round(time.Millisecond))
	assertNoMountsUnder(t, filepath.Join(base.DefaultCacheDir, "templates"))

	start = time.Now()
	again, err := Ensure(t.Context(), opts)
	if err != nil || again != rootfs {
		t.Fatalf("second Ensure = %q, %v; want %q", again, err, rootfs)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second Ensure took %s, want a cache hit", d)
	}
	t.Logf("second Ensure (cache hit): %s", time.Since(start).Round(time.Microsecond))
	_, m, err := Inspect(opts)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	t.Logf("rootfs %s: %d installed packages, %s, deno %q (error %q), kernels %v, built in %.0fs",
		rootfs, len(m.Installed), cachedfs.HumanBytes(m.SizeBytes), m.Deno, m.DenoError, m.Kernels, m.BuildSeconds)
	checkPython(t, rootfs)
	checkKernels(t, rootfs, m)
	checkCharts(t, rootfs)
	checkJava(t, rootfs)
	checkIPythonLoadsFormatters(t, rootfs)
	// A sudoers syntax error would take sudo away from the sandbox user.
	if out, err := chrootOutput(rootfs, "/usr/sbin/visudo", "-c"); err != nil || !strings.Contains(out, sudoersDropIn+": parsed OK") {
		t.Errorf("visudo -c: %v\n%s", err, out)
	}
}

func checkPython(t *testing.T, rootfs string) {
	out, err := chrootOutput(rootfs, "/usr/bin/python3", "-c",
		"import numpy, pandas, matplotlib, scipy, ipykernel, seaborn, requests, openpyxl, PIL, bs4, lxml; print('ok')")
	if err != nil || out != "ok" {
		t.Errorf("importing the data stack: %v\n%s", err, out)
	}
	for _, bad := range []string{"gcc", "cpp", "g++"} {
		if _, err := os.Lstat(filepath.Join(rootfs, "usr/bin", bad)); err == nil {
			t.Errorf("/usr/bin/%s is installed; no compilers wanted", bad)
		}
	}
}

func checkKernels(t *testing.T, rootfs string, m *Marker) {
	data, err := os.ReadFile(filepath.Join(rootfs, KernelsFile))
	if err != nil {
		t.Fatal(err)
	}
	var kernels map[string]Kernel
	if err := json.Unmarshal(data, &kernels); err != nil {
		t.Fatalf("%s: %v", KernelsFile, err)
	}
	if k := kernels["python"]; len(k.Argv) == 0 || k.InterruptMode != "signal" {
		t.Errorf("python kernel = %+v", k)
	}
	if m.DenoError != "" {
		t.Errorf("Deno missing from the template: %s", m.DenoError)
		return
	}
	if _, ok := kernels["typescript"]; !ok {
		t.Errorf("no typescript kernel in %s", data)
	}
	out, err := chrootOutput(rootfs, denoBinary, "eval", "console.log(6*7)")
	if err != nil || out != "42" {
		t.Errorf("deno eval: %v\n%s", err, out)
	}
}

// javaProbe runs one cell through the Java side of JavaKernel, with the
// kernel's own command line, and prints the frames it got. -Xshare:on
// makes the JVM fail rather than start without the class archive.
const javaProbe = `import base64, os, struct, subprocess, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import warren_java_kernel as k
if not os.path.exists(k.ARCHIVE):
    sys.exit("no class archive " + k.ARCHIVE)
p = subprocess.Popen(k.java_argv("-Xshare:on"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
p.stdin.write(b"x " + base64.b64encode(b'System.out.println("hi"); 6 * 7') + b"\n")
p.stdin.flush()
got = []
while True:
    kind, n = struct.unpack(">cI", p.stdout.read(5))
    if kind == b"d":
        break
    got.append(kind.decode() + ":" + p.stdout.read(n).decode())
p.kill()
print("|".join(got))
`

// checkJava proves the JDK is installed and the Java kernel's classes were
// compiled: a cell prints and yields a value.
func checkJava(t *testing.T, rootfs string) {
	out, err := chrootOutput(rootfs, "/usr/bin/python3", "-c", javaProbe, JavaKernel)
	// Importing the kernel imports ipykernel, whose debugger may warn first.
	if err != nil || !strings.HasSuffix(out, "\no:hi|o:\n|r:42") {
		t.Errorf("running a Java cell: %v\n%s", err, out)
	}
}

// chrootOutput runs a command in rootfs. The rootfs is the shared, complete
// cache entry, which nothing may change (a run as root once left
// matplotlib's and Deno's caches in it): the command runs in a mount
// namespace of its own with a tmpfs over the rootfs's /tmp, and its caches
// go there. /proc is mounted as in a sandbox: the JVM needs it to map its
// class archive.
func chrootOutput(rootfs string, args ...string) (string, error) {
	script := `mount -t tmpfs tmpfs "$0/tmp" && mount -t proc proc "$0/proc" && exec chroot "$0" "$@"`
	cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, rootfs}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/tmp",
		"PYTHONDONTWRITEBYTECODE=1", "MPLBACKEND=Agg", "MPLCONFIGDIR=/tmp/mpl",
		"DENO_NO_UPDATE_CHECK=1", "DENO_DIR=/tmp/deno"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func assertNoMountsUnder(t *testing.T, dir string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	left, err := cachedfs.MountsUnder(real)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("mounts left under %s: %v", dir, left)
	}
}

// testLogWriter sends each progress line to t.Log.
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
