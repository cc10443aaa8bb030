package e2e

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// warrenCLI runs `warren args...` against s, as a user would with the
// SDK's variables set, and returns its combined output.
func warrenCLI(t *testing.T, cfg config, s *server, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(cfg.warrenBin, args...)
	cmd.Dir = dir
	cmd.Env = append(environWithout("E2B_"), "E2B_API_URL="+s.url, "E2B_API_KEY="+s.apiKey)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeTgz packs one file into a gzipped tarball, for ADD.
func writeTgz(t *testing.T, path, name, content string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte(content))
	_ = tw.Close()
	_ = zw.Close()
}

const multiStage = `ARG BASE=base
FROM ${BASE} AS builder
ARG GREETING=hello
RUN mkdir -p /out && echo "$GREETING from builder" > /out/artifact.txt

FROM base
LABEL team=agents
ENV APP_HOME=/opt/app
WORKDIR $APP_HOME
COPY --chown=user:user src/ ./src/
COPY --from=builder /out/artifact.txt /opt/app/
ADD data.tgz /opt/unpacked/
ARG FILES_URL
ADD ${FILES_URL}/notes.txt /opt/fetched/
COPY . /opt/ctx/
RUN python3 src/tool.py > tool.out
USER user
CMD ["python3", "-m", "http.server", "8080"]
HEALTHCHECK CMD curl -sf http://127.0.0.1:8080/
`

// TestDockerfileBuild builds a multi-stage Dockerfile with the CLI, starts
// a sandbox from it, rebuilds from the cache, and checks the errors users
// meet: a syntax error, a source outside the context, a failing RUN.
func TestDockerfileBuild(t *testing.T) {
	cfg := loadConfig(t)
	s := launchServer(t, cfg, serverOpts{index: 81, runtime: cfg.runtimes[0]})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Dockerfile": multiStage, "src/tool.py": "print('tool ok')\n",
		".dockerignore": "secret.txt\n", "secret.txt": "do not ship\n",
		"Bad":    "FROM base\nRUN echo ok\nCOPY ../etc/passwd /x\n",
		"Syntax": "FROM base\nRUN echo ok\nFROBNICATE x\n",
		"Fail":   "FROM base\nRUN echo one\nRUN echo about to fail && exit 7\n",
	})
	writeTgz(t, filepath.Join(dir, "data.tgz"), "inner.txt", "unpacked\n")

	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/notes.txt" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "fetched\n")
	}))
	defer files.Close()

	out, err := warrenCLI(t, cfg, s, dir, "template", "build", "--name", "df-e2e", "--build-arg", "GREETING=howdy",
		"--build-arg", "FILES_URL="+files.URL, "--tag", "v1", ".")
	if err != nil {
		t.Fatalf("warren template build: %v\n%s", err, out)
	}
	got := runIn(t, s, "df-e2e:v1", "pwd; whoami; cat artifact.txt tool.out /opt/unpacked/inner.txt; stat -c %U src/tool.py; ls /opt/ctx; echo $APP_HOME; "+
		"stat -c '%a %U' /opt/fetched/notes.txt; sudo cat /opt/fetched/notes.txt; curl -s -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:8080/")
	want := "/opt/app\nuser\nhowdy from builder\ntool ok\nunpacked\nuser\nBad\nDockerfile\nFail\nSyntax\ndata.tgz\nsrc\n/opt/app\n600 root\nfetched\n200\n"
	if got != want {
		t.Fatalf("sandbox from the Dockerfile printed\n%q, want\n%q", got, want)
	}

	again, err := warrenCLI(t, cfg, s, dir, "template", "build", "--name", "df-e2e", "--build-arg", "GREETING=howdy", "--build-arg", "FILES_URL="+files.URL, ".")
	if err != nil || strings.Count(again, "CACHED") < 8 {
		t.Fatalf("unchanged rebuild (want every file step cached): %v\n%s", err, again)
	}
	fresh, err := warrenCLI(t, cfg, s, dir, "template", "build", "--no-cache", "--name", "df-e2e", "--build-arg", "GREETING=howdy", "--build-arg", "FILES_URL="+files.URL, ".")
	if err != nil || strings.Contains(fresh, "CACHED") {
		t.Fatalf("--no-cache rebuild (want no step cached): %v\n%s", err, fresh)
	}

	// --target builds the first stage alone: no FILES_URL is needed, and
	// the sandbox has the builder's output but nothing of the final stage.
	if out, err := warrenCLI(t, cfg, s, dir, "template", "build", "--target", "builder", "--name", "df-target", "."); err != nil {
		t.Fatalf("--target builder: %v\n%s", err, out)
	}
	if got := runIn(t, s, "df-target", "cat /out/artifact.txt; test -e /opt/app || echo no-final-stage"); got != "hello from builder\nno-final-stage\n" {
		t.Fatalf("sandbox from --target builder printed %q", got)
	}

	for _, tc := range []struct{ file, want string }{
		{"Syntax", "Dockerfile:3: unknown instruction"},
		{"Bad", "Dockerfile:3: invalid source path \"../etc/passwd\""},
		{"Fail", "exited with code 7"},
	} {
		out, err := warrenCLI(t, cfg, s, dir, "template", "build", "-f", tc.file, "--name", "df-"+strings.ToLower(tc.file), ".")
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("building %s: %v, output lacks %q:\n%s", tc.file, err, tc.want, out)
		}
		if tc.file == "Fail" && (!strings.Contains(out, "about to fail") || !strings.Contains(out, "Dockerfile:3")) {
			t.Errorf("a failing RUN should name its line and show its output:\n%s", out)
		}
	}
}

// TestBuildFillsDisk runs a RUN that writes more than the data disk holds:
// the build fails cleanly, leaves no layer behind, and the next build works.
func TestBuildFillsDisk(t *testing.T) {
	cfg := loadConfig(t)
	disk := t.TempDir()
	if err := unix.Mount("tmpfs", disk, "tmpfs", 0, "size=192m"); err != nil {
		t.Skipf("mounting a small tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(disk, unix.MNT_DETACH) })
	data := filepath.Join(disk, "data")
	// The build sandbox's own disk (100 MB) fills before the data disk.
	s := launchServer(t, cfg, serverOpts{index: 82, runtime: cfg.runtimes[0], dataDir: data, args: []string{"--default-disk=100"}})
	free := func() uint64 {
		var st unix.Statfs_t
		_ = unix.Statfs(data, &st)
		return st.Bavail * uint64(st.Bsize)
	}
	before := free()
	st := s.buildTemplate(t, "fills-disk", map[string]any{"fromTemplate": "base",
		"steps": []map[string]any{{"type": "RUN", "args": []string{"head -c 400M /dev/zero > /big.bin", "root"}}}})
	if st["status"] != "error" || !strings.Contains(reason(st), "No space left") {
		t.Fatalf("status %v, reason %q: want a failed build saying the disk is full", st["status"], reason(st))
	}
	layers, _ := os.ReadDir(filepath.Join(data, "layers"))
	for _, l := range layers {
		if strings.HasPrefix(l.Name(), ".tmp") {
			t.Errorf("left behind: %s", l.Name())
		}
	}
	if after := free(); after+8<<20 < before {
		t.Errorf("the failed build left %d MiB on the disk", (before-after)>>20)
	}
	ok := s.buildTemplate(t, "after-full", map[string]any{"fromTemplate": "base",
		"steps": []map[string]any{{"type": "RUN", "args": []string{"echo fine > /f", "root"}}}})
	if ok["status"] != "ready" {
		b, _ := json.Marshal(ok)
		t.Fatalf("a build after the full disk failed: %s", b)
	}
}
