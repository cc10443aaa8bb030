package oci

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestMountedAt: a mount's root is a mount point; a directory inside it,
// a plain directory and a missing path are not.
func TestMountedAt(t *testing.T) {
	testutil.RequiresRoot(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	inside := filepath.Join(mnt, "sub")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{mnt, true},
		{inside, false},
		{dir, false},
		{filepath.Join(dir, "missing"), false},
	} {
		got, err := mountedAt(tc.path)
		if err != nil || got != tc.want {
			t.Errorf("mountedAt(%s) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
}
