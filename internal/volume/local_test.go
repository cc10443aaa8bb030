package volume

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// loopsOf lists the loop devices whose backing file is img.
func loopsOf(t *testing.T, img string) []string {
	t.Helper()
	var out []string
	devs, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range devs {
		b, err := os.ReadFile(f)
		if err == nil && strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == img {
			out = append(out, f)
		}
	}
	return out
}

// TestLocal drives one volume through its life on a loop-mounted image:
// writes stop at its size with ENOSPC (the content API's and a direct
// writer's), the image never grows past it, an unmounted volume (a host
// reboot) is mounted again with its data on first use, and delete leaves
// no mount, loop device or file.
func TestLocal(t *testing.T) {
	testutil.RequiresRoot(t)
	testutil.RequiresBinary(t, "mkfs.ext4")
	ctx := context.Background()
	dir := t.TempDir()
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	const id, sizeMB = "vol_test", 16
	if err := l.Create(ctx, id, sizeMB); err != nil {
		t.Fatal(err)
	}
	img, mnt := l.files(id)
	t.Cleanup(func() { _ = l.Delete(context.Background(), id) })
	if err := l.Create(ctx, id, sizeMB); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("second Create: %v, want already exists", err)
	}
	root, err := l.Path(ctx, id)
	if err != nil || root != filepath.Join(mnt, "data") {
		t.Fatalf("Path = %q, %v", root, err)
	}
	fillVolume(t, root)
	used, size, err := l.Usage(ctx, id)
	if err != nil || size != sizeMB<<20 || used <= 0 || used > size {
		t.Fatalf("Usage = %d, %d, %v", used, size, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(img, &st); err != nil || st.Blocks*512 > sizeMB<<20 {
		t.Fatalf("the image takes %d bytes on the host (%v), past %d", st.Blocks*512, err, sizeMB<<20)
	}

	// A reboot: the mount is gone, the image stays.
	if err := unix.Unmount(mnt, 0); err != nil {
		t.Fatal(err)
	}
	if root, err = l.Path(ctx, id); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "keep")); err != nil || string(b) != "kept" {
		t.Fatalf("after a remount: %q, %v", b, err)
	}
	// A restarted server finds it mounted and does not mount it twice,
	// nor do callers at once after a reboot.
	if err := unix.Unmount(mnt, 0); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() { _, err := l.Path(ctx, id); errs <- err }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(loopsOf(t, img)); n != 1 {
		t.Fatalf("%d loop devices back the image, want 1", n)
	}

	if err := l.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	checkGone(t, l, id)
}

// TestLocalDeleteBusy: a volume a process still holds open is detached,
// so the delete succeeds and the data goes when the holder lets go.
func TestLocalDeleteBusy(t *testing.T) {
	testutil.RequiresRoot(t)
	testutil.RequiresBinary(t, "mkfs.ext4")
	ctx := context.Background()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const id = "vol_busy"
	if err := l.Create(ctx, id, 8); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Delete(context.Background(), id) })
	root, err := l.Path(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	cmd.Dir = root // the holder's cwd keeps the mount busy
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	img, mnt := l.files(id)
	err = l.Delete(ctx, id)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err != nil {
		t.Fatalf("Delete of a busy volume: %v", err)
	}
	if ok, _ := mountinfo.Mounted(mnt); ok {
		t.Fatal("still mounted after Delete")
	}
	if err := testutil.Poll(testTimeout, testInterval, func() error {
		if loops := loopsOf(t, img); len(loops) != 0 {
			return errors.New("loop device still bound")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// fillVolume writes a file to keep through the content API, then fills the
// volume through it and through a direct writer: both get ENOSPC.
func fillVolume(t *testing.T, root string) {
	t.Helper()
	c, err := openContent(root)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.write("/keep", strings.NewReader("kept"), Attrs{}, false, -1); err != nil {
		t.Fatal(err)
	}
	_, err = c.write("/fill", io.LimitReader(zeros{}, 64<<20), Attrs{}, false, -1)
	if !errors.Is(err, errdefs.ErrNoSpace) {
		t.Fatalf("writing 64 MB to a 16 MB volume: %v, want no space", err)
	}
	f, err := os.Create(filepath.Join(root, "direct"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(f, io.LimitReader(zeros{}, 64<<20))
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("a direct writer past the size: %v, want ENOSPC", err)
	}
}

// checkGone checks that a deleted volume left no mount, loop device or
// file, and that deleting it again is no error.
func checkGone(t *testing.T, l *Local, id string) {
	t.Helper()
	ctx := context.Background()
	img, mnt := l.files(id)
	if ok, _ := mountinfo.Mounted(mnt); ok {
		t.Fatal("still mounted after Delete")
	}
	for _, p := range []string{img, mnt} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s is still there after Delete: %v", p, err)
		}
	}
	if loops := loopsOf(t, img); len(loops) != 0 {
		t.Fatalf("loop devices left: %v", loops)
	}
	if _, err := l.Path(ctx, id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("Path after Delete: %v, want not found", err)
	}
	if err := l.Delete(ctx, id); err != nil {
		t.Fatalf("a second Delete: %v", err)
	}
}

const (
	testTimeout  = 10 * time.Second
	testInterval = 50 * time.Millisecond
)
