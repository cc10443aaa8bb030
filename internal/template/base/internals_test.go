package base

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

func TestStepOf(t *testing.T) {
	t.Parallel()
	// Lines as debootstrap 1.0.128 prints them, in order.
	lines := []struct {
		line string
		step int
		item string
	}{
		{"I: Retrieving InRelease ", stepIndex, ""},
		{"I: Valid Release signature (key id 4D64FEC1)", stepIndex, ""},
		{"I: Resolving dependencies of base packages...", stepIndex, ""},
		{"I: Retrieving adduser 3.134", stepDownload, "adduser"},
		{"I: Validating adduser 3.134", 0, ""},
		{"I: Extracting bash...", stepExtract, "bash"},
		{"I: Installing core packages...", stepCore, ""},
		{"I: Unpacking required packages...", stepCore, ""},
		{"I: Unpacking libc6:amd64...", 0, "libc6"},
		{"I: Configuring required packages...", stepCore, ""},
		{"I: Unpacking the base system...", stepUnpackBase, ""},
		{"I: Configuring the base system...", stepConfigureBase, ""},
		{"I: Configuring git...", 0, "git"},
		{"I: Base system installed successfully.", 0, ""},
		{"W: something odd", 0, ""},
		{"I:", 0, ""},
	}
	cur := 0
	for _, l := range lines {
		step, item := stepOf(l.line, cur)
		if step != l.step || item != l.item {
			t.Errorf("stepOf(%q) = %d, %q; want %d, %q", l.line, step, item, l.step, l.item)
		}
		cur = max(cur, step)
	}
}

func TestProgressLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgress(&buf)
	for _, l := range []string{"I: Retrieving InRelease ", "I: Retrieving bash 5.2", "I: Retrieving git 2.39", "I: Retrieving InRelease "} {
		p.Observe(l)
	}
	p.Beat()
	got := buf.String()
	for _, want := range []string{
		"base: debootstrap: fetching the package index... (step 1/8)\n",
		"base: debootstrap: downloading packages... (step 2/8)\n",
		"2 packages so far (latest git)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "step 1/8") != 1 {
		t.Errorf("a step went backwards:\n%s", got)
	}
}

// TestRemoveLeftovers mounts a tmpfs inside a fake interrupted build, as a
// killed debootstrap leaves /proc, and checks the cleanup unmounts it
// instead of deleting through it.
func TestRemoveLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts a tmpfs; needs root")
	}
	t.Parallel()
	l := newLayout(t.TempDir(), "0123456789abcdef")
	mp := filepath.Join(l.templates, "base-0123456789abcdef.tmp-42/rootfs/proc")
	if err := os.MkdirAll(mp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mp, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mp, syscall.MNT_DETACH) })
	writeTestFile(t, filepath.Join(mp, "inside-mount"), "x")
	writeTestFile(t, filepath.Join(l.final, "rootfs/etc/passwd"), "half-published, no marker")

	if err := cachedfs.RemoveLeftovers(l.templates, "base", l.final); err != nil {
		t.Fatalf("removeLeftovers: %v", err)
	}
	assertNoMountsUnder(t, l.templates)
	entries, _ := os.ReadDir(l.templates)
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestRemoveLeftoversKeepsMarkedBuilds(t *testing.T) {
	t.Parallel()
	l := newLayout(t.TempDir(), "0123456789abcdef")
	writeTestFile(t, filepath.Join(l.final, cachedfs.MarkerName), "{not json")
	if err := cachedfs.RemoveLeftovers(l.templates, "base", l.final); err == nil {
		t.Error("want an error for an unreadable marker")
	}
	if _, err := os.Stat(filepath.Join(l.final, cachedfs.MarkerName)); err != nil {
		t.Errorf("marked build was removed: %v", err)
	}
}

func TestMarkerAndCacheHit(t *testing.T) {
	t.Parallel()
	opts := Options{CacheDir: t.TempDir()}
	r := newRecipe(DefaultSuite, Packages)
	l := newLayout(opts.CacheDir, r.hash())
	if _, _, err := Inspect(opts); !errdefs.IsNotFound(err) {
		t.Fatalf("Inspect of an empty cache: %v, want a not-found error", err)
	}
	if err := os.MkdirAll(filepath.Join(l.final, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cachedfs.WriteMarker(l.final, &Marker{Recipe: r.hash(), SizeBytes: 42}); err != nil {
		t.Fatal(err)
	}
	// A cache hit needs neither root nor debootstrap, and takes no lock.
	var buf bytes.Buffer
	opts.Progress = &buf
	got, err := Ensure(t.Context(), opts)
	if err != nil || got != filepath.Join(l.final, "rootfs") {
		t.Fatalf("Ensure = %q, %v", got, err)
	}
	if !strings.Contains(buf.String(), "using cached rootfs") {
		t.Errorf("progress = %q", buf.String())
	}
	if _, err := readMarker(l.final, "ffffffffffffffff"); err == nil {
		t.Error("marker accepted for another recipe")
	}
}

func TestMissingDebootstrapSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := debootstrapFallback
	debootstrapFallback = "/nonexistent/debootstrap"
	t.Cleanup(func() { debootstrapFallback = saved })
	_, err := debootstrapPath()
	if err == nil || !strings.Contains(err.Error(), "apt-get install debootstrap") {
		t.Fatalf("err = %v, want one naming the fix", err)
	}
	if !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("err = %v, want class ErrFailedPrecondition", err)
	}
}
