package base

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/mountinfo"

	"github.com/warren-sandbox/warren/internal/errdefs"
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

func TestDeepestFirst(t *testing.T) {
	t.Parallel()
	const info = `22 1 8:1 / / rw - ext4 /dev/sda1 rw
60 22 0:5 / /var/cache/warren/templates/base-x.tmp-1/rootfs/proc rw - proc proc rw
61 22 0:6 / /var/cache/warren/templates/base-x.tmp-1/rootfs/proc/sys/fs/binfmt_misc rw - binfmt_misc b rw
62 22 0:7 / /var/cache/warren/templates/base-x.tmp-1/rootfs/dir\040with\040space rw - tmpfs t rw
63 22 0:8 / /var/cache/warren/templates/base-x.tmp-10 rw - tmpfs t rw
`
	found, err := mountinfo.Parse(strings.NewReader(info), "/var/cache/warren/templates/base-x.tmp-1")
	got := deepestFirst(found)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/var/cache/warren/templates/base-x.tmp-1/rootfs/proc/sys/fs/binfmt_misc",
		"/var/cache/warren/templates/base-x.tmp-1/rootfs/proc",
		"/var/cache/warren/templates/base-x.tmp-1/rootfs/dir with space",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
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

	if err := removeLeftovers(l); err != nil {
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
	writeTestFile(t, filepath.Join(l.final, markerName), "{not json")
	if err := removeLeftovers(l); err == nil {
		t.Error("want an error for an unreadable marker")
	}
	if _, err := os.Stat(filepath.Join(l.final, markerName)); err != nil {
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
	if err := writeMarker(l.final, &Marker{Recipe: r.hash(), SizeBytes: 42}); err != nil {
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

func TestDiskUsageCountsHardLinksOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "a"), strings.Repeat("x", 64<<10))
	one, err := diskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	two, err := diskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if one < 64<<10 || two != one {
		t.Errorf("du with one link %d, with two %d; want equal and >= 64 KiB", one, two)
	}
}

func TestLockIsExclusive(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "base.lock")
	first, err := acquireLock(t.Context(), path, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	var waiting bytes.Buffer
	if _, err := acquireLock(ctx, path, &waiting); err == nil {
		t.Fatal("second lock acquired while the first is held")
	}
	if !strings.Contains(waiting.String(), "waiting for another build") {
		t.Errorf("no waiting notice: %q", waiting.String())
	}
	done := make(chan error, 1)
	go func() {
		second, err := acquireLock(t.Context(), path, &bytes.Buffer{})
		if err == nil {
			second.Close()
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	first.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("lock not acquired after release")
	}
}
