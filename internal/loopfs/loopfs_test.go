package loopfs

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// hasJournal reads ext4's COMPAT_HAS_JOURNAL from the image's superblock
// (1024 bytes in; s_feature_compat at 0x5C).
func hasJournal(t *testing.T, img string) bool {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [4]byte
	if _, err := f.ReadAt(b[:], 1024+0x5C); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint32(b[:])&0x4 != 0
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestImageMount makes each kind of image, mounts it with the flags
// asked, and fills it: the writer gets ENOSPC at the image's size.
func TestImageMount(t *testing.T) {
	testutil.RequiresRoot(t)
	testutil.RequiresBinary(t, "mkfs.ext4")
	cases := []struct {
		name    string
		kind    Format
		journal bool
		flags   uintptr
	}{
		{"scratch", Scratch, false, unix.MS_NODEV | unix.MS_NOATIME},
		{"durable", Durable, true, unix.MS_NODEV | unix.MS_NOSUID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
			if err := MakeImage(img, 8, tc.kind); err != nil {
				t.Fatal(err)
			}
			if err := MakeImage(img, 8, tc.kind); !errors.Is(err, os.ErrExist) {
				t.Fatalf("a second MakeImage over the file: %v, want exists", err)
			}
			if got := hasJournal(t, img); got != tc.journal {
				t.Fatalf("journal = %v, want %v", got, tc.journal)
			}
			if err := os.Mkdir(mnt, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := Mount(img, mnt, tc.flags); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
			var st unix.Statfs_t
			if err := unix.Statfs(mnt, &st); err != nil {
				t.Fatal(err)
			}
			if want := int64(unix.ST_NODEV); int64(st.Flags)&want == 0 {
				t.Fatalf("mount flags %#x lack nodev", st.Flags)
			}
			f, err := os.Create(filepath.Join(mnt, "fill"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(f, io.LimitReader(zeros{}, 32<<20))
			if err == nil {
				err = f.Sync()
			}
			f.Close()
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("writing 32 MB to an 8 MB image: %v, want ENOSPC", err)
			}
			if err := unix.Unmount(mnt, 0); err != nil {
				t.Fatal(err)
			}
		})
	}
}
