package builder

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
	"github.com/warren-sandbox/warren/internal/template/layer"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// fakeRunner stands in for the sandbox manager: a RUN "succeeds" by
// writing the step's settings into its layer.
type fakeRunner struct{ runs []RunStep }

func (f *fakeRunner) RunBuildStep(ctx context.Context, s RunStep) (int, error) {
	f.runs = append(f.runs, s)
	if strings.Contains(s.Command, "exit 3") {
		_, _ = s.Output.Write([]byte("failing now\n"))
		return 3, nil
	}
	if err := os.MkdirAll(filepath.Join(s.LayerDir, "ran"), 0o755); err != nil {
		return 0, err
	}
	return 0, os.WriteFile(filepath.Join(s.LayerDir, "ran", "marker"), []byte(s.Command), 0o644)
}

// baseImage is a one-layer image: /bin -> usr/bin, /etc/passwd with user.
func baseImage(t *testing.T) string {
	dir := t.TempDir()
	for _, d := range []string{"usr/bin", "etc", "home/user", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Chmod(filepath.Join(dir, "tmp"), 0o1777)
	_ = os.Symlink("usr/bin", filepath.Join(dir, "bin"))
	_ = os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "etc/group"), []byte("root:x:0:\nuser:x:1000:\n"), 0o644)
	return dir
}

func uploadTar(t *testing.T, b *Builder, hash string, files map[string]string) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg, ModTime: time.Unix(1e9, 0)})
		_, _ = tw.Write([]byte(content))
	}
	_ = tw.Close()
	_ = zw.Close()
	if err := b.SaveFiles(TeamFiles("", hash), &buf, 1<<20); err != nil {
		t.Fatal(err)
	}
}

// TestBuildSteps runs a request against a fake runner: COPY lands through
// the image's symlinks with the asked owner and mode, WORKDIR is created
// for the current user, RUN gets the env, user and workdir, a second build
// is all cache hits, and a failing RUN reports its output.
func TestBuildSteps(t *testing.T) {
	testutil.RequiresRoot(t)
	ctx := context.Background()
	st := sqlitetest.Open(t)
	rootfs := baseImage(t)
	if err := st.PutTemplate(ctx, &store.Template{ID: "img", Aliases: []string{"img"}, RootfsPath: rootfs}); err != nil {
		t.Fatal(err)
	}
	ls, err := layer.NewStore(filepath.Join(t.TempDir(), "layers"))
	if err != nil {
		t.Fatal(err)
	}
	run := &fakeRunner{}
	work := t.TempDir()
	b, err := New(Options{Store: st, Runner: run, Layers: ls, FilesDir: filepath.Join(work, "files"), WorkDir: filepath.Join(work, "w")})
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Repeat("ab", 32)
	uploadTar(t, b, hash, map[string]string{"tools/hello": "#!/bin/sh\necho hi\n"})
	req := &wire.BuildStart{FromTemplate: "img", Steps: []wire.Step{
		{Type: wire.StepEnv, Args: []string{"A", "1"}},
		{Type: wire.StepCopy, Args: []string{"tools/hello", "/bin/", "user", "0755"}, FilesHash: hash},
		{Type: wire.StepWorkdir, Args: []string{"/srv/app"}},
		{Type: wire.StepRun, Args: []string{"make it"}},
	}}
	build := func() (*fsState, []wire.BuildLogEntry) {
		l, err := newLog(filepath.Join(work, "log"))
		if err != nil {
			t.Fatal(err)
		}
		j := &job{log: l}
		res, err := b.run(ctx, j, req)
		if err != nil {
			t.Fatalf("build: %v\n%s", err, lastLines(l.Entries(0)))
		}
		return res, l.Entries(0)
	}
	res, _ := build()
	// COPY followed /bin -> usr/bin inside the image.
	var copied os.FileInfo
	for _, l := range res.layers {
		if fi, err := os.Lstat(filepath.Join(l, "usr/bin/hello")); err == nil {
			copied = fi
		}
		if _, err := os.Lstat(filepath.Join(l, "bin")); err == nil && l != rootfs {
			t.Errorf("a layer shadows the image's /bin symlink: %s", l)
		}
	}
	if copied == nil || copied.Mode().Perm() != 0o755 || copied.Sys().(*syscall.Stat_t).Uid != 1000 {
		t.Fatalf("copied file: %v", copied)
	}
	if len(run.runs) != 1 || run.runs[0].Env["A"] != "1" || run.runs[0].User != "user" || run.runs[0].Workdir != "/srv/app" {
		t.Fatalf("RUN got %+v", run.runs)
	}
	if res.workdir != "/srv/app" || res.env["A"] != "1" {
		t.Fatalf("state after the build: %+v", res)
	}
	// The same request again: every layer step is a cache hit, no RUN.
	_, entries := build()
	cached := 0
	for _, e := range entries {
		if e.Message == "CACHED" {
			cached++
		}
	}
	if cached != 3 || len(run.runs) != 1 {
		t.Fatalf("rebuild: %d cached, %d runs", cached, len(run.runs))
	}
	// A failing RUN names its exit code and its own output.
	req.Steps = append(req.Steps, wire.Step{Type: wire.StepRun, Args: []string{"exit 3"}})
	l, _ := newLog(filepath.Join(work, "log2"))
	_, err = b.run(ctx, &job{log: l}, req)
	if err == nil || !strings.Contains(err.Error(), "exited with code 3") || !strings.Contains(err.Error(), "failing now") || strings.Contains(err.Error(), "make it") {
		t.Fatalf("failing RUN: %v", err)
	}
}

// TestBuildManyLayers: a stack of maxTemplateLayers layers builds (every
// COPY mounts a view of all the layers below it, far past the page of
// mount options absolute paths would need), and one more step is refused
// with a message that says what to do.
func TestBuildManyLayers(t *testing.T) {
	testutil.RequiresRoot(t)
	ctx := context.Background()
	st := sqlitetest.Open(t)
	if err := st.PutTemplate(ctx, &store.Template{ID: "img", Aliases: []string{"img"}, RootfsPath: baseImage(t)}); err != nil {
		t.Fatal(err)
	}
	// A long layer root, as under a deep data dir.
	ls, err := layer.NewStore(filepath.Join(t.TempDir(), "a-data-dir-with-a-rather-long-name", "layers"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	b, err := New(Options{Store: st, Runner: &fakeRunner{}, Layers: ls, FilesDir: filepath.Join(work, "files"), WorkDir: filepath.Join(work, "w")})
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Repeat("cd", 32)
	uploadTar(t, b, hash, map[string]string{"f": "layer"})
	req := &wire.BuildStart{FromTemplate: "img"}
	for i := range maxTemplateLayers - 1 {
		req.Steps = append(req.Steps, wire.Step{Type: wire.StepCopy, Args: []string{"f", fmt.Sprintf("/d/%d", i)}, FilesHash: hash})
	}
	l, _ := newLog(filepath.Join(work, "log"))
	res, err := b.run(ctx, &job{log: l}, req)
	if err != nil {
		t.Fatalf("%d layers: %v\n%s", maxTemplateLayers, err, lastLines(l.Entries(0)))
	}
	if len(res.layers) != maxTemplateLayers {
		t.Fatalf("%d layers, want %d", len(res.layers), maxTemplateLayers)
	}
	req.Steps = append(req.Steps, wire.Step{Type: wire.StepCopy, Args: []string{"f", "/d/last"}, FilesHash: hash})
	l, _ = newLog(filepath.Join(work, "log2"))
	_, err = b.run(ctx, &job{log: l}, req)
	if err == nil || !strings.Contains(err.Error(), "too many layers") || !strings.Contains(err.Error(), "combine RUN and COPY") {
		t.Fatalf("one layer more: %v", err)
	}
}
