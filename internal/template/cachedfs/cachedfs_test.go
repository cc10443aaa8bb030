package cachedfs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
)

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
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
	found, err := mountinfo.GetMountsFromReader(strings.NewReader(info), mountinfo.PrefixFilter("/var/cache/warren/templates/base-x.tmp-1"))
	if err != nil {
		t.Fatal(err)
	}
	got := deepestFirst(mountPoints(found))
	want := []string{
		"/var/cache/warren/templates/base-x.tmp-1/rootfs/proc/sys/fs/binfmt_misc",
		"/var/cache/warren/templates/base-x.tmp-1/rootfs/proc",
		"/var/cache/warren/templates/base-x.tmp-1/rootfs/dir with space",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestDiskUsageCountsHardLinksOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "a"), strings.Repeat("x", 64<<10))
	one, err := DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	two, err := DiskUsage(dir)
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
	first, err := AcquireLock(t.Context(), "base", path, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	var waiting bytes.Buffer
	if _, err := AcquireLock(ctx, "base", path, &waiting); err == nil {
		t.Fatal("second lock acquired while the first is held")
	}
	if !strings.Contains(waiting.String(), "waiting for another build") {
		t.Errorf("no waiting notice: %q", waiting.String())
	}
	done := make(chan error, 1)
	go func() {
		second, err := AcquireLock(t.Context(), "base", path, &bytes.Buffer{})
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
