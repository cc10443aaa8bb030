package layer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestShortKey(t *testing.T) {
	t.Parallel()
	short := keyA[:shortLen]
	tests := []struct {
		name, path, want string
		ok               bool
	}{
		{"build layer", "/var/lib/warren/layers/" + short, short, true},
		{"image layer", "/data/images/layers/" + short, short, true},
		{"trailing slash", "/data/layers/" + short + "/", short, true},
		{"cache dir rootfs", "/var/cache/warren/templates/base-9419fa6a05cfb99f/rootfs", "", false},
		{"short key outside a layers dir", "/data/other/" + short, "", false},
		{"full key as name", "/data/layers/" + keyA, "", false},
		{"upper-case hex", "/data/layers/AAAAAAAAAAAAAAAAAAAA", "", false},
		{"too short", "/data/layers/aaaa", "", false},
		{"empty", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ShortKey(tc.path)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("ShortKey(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestStoreFind(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	if _, err := s.Create(t.Context(), keyA, writeHello); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, prefix, want string
		ok                 bool
	}{
		{"short key", keyA[:shortLen], keyA, true},
		{"full key", keyA, keyA, true},
		{"longer prefix", keyA[:40], keyA, true},
		{"other layer", keyB[:shortLen], "", false},
		{"same short, other key", keyA[:shortLen] + "b", "", false},
		{"too short", keyA[:10], "", false},
		{"not hex", "../../../../etc/passwd", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := s.Find(tc.prefix)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Find(%q) = %q, %v; want %q, %v", tc.prefix, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestArchiveRoundTrip: what Archive writes, Extract with whiteouts turns
// back into the same layer: contents, modes, times, symlinks, hardlinks,
// fifos and user xattrs; as root also owners, overlay whiteouts and
// opaque directories, which travel as OCI whiteout entries.
func TestArchiveRoundTrip(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	mtime := time.Unix(1_700_000_000, 0)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "etc/app"), 0o750))
	must(os.WriteFile(filepath.Join(src, "etc/app/conf"), []byte("key=value\n"), 0o640))
	must(os.Link(filepath.Join(src, "etc/app/conf"), filepath.Join(src, "etc/conf-link")))
	must(os.Symlink("app/conf", filepath.Join(src, "etc/sym")))
	must(os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(unix.Mkfifo(filepath.Join(src, "pipe"), 0o600))
	must(os.Chtimes(filepath.Join(src, "run.sh"), mtime, mtime))
	_ = unix.Lsetxattr(filepath.Join(src, "run.sh"), "user.note", []byte("hi"), 0) // tmpfs may refuse
	if isRoot() {
		must(unix.Mknod(filepath.Join(src, "etc/gone"), unix.S_IFCHR, 0))
		must(os.Mkdir(filepath.Join(src, "opaque"), 0o755))
		must(unix.Lsetxattr(filepath.Join(src, "opaque"), opaqueXattr, []byte("y"), 0))
		must(os.Lchown(filepath.Join(src, "etc/app/conf"), 1000, 1001))
	}
	var buf bytes.Buffer
	must(Archive(context.Background(), &buf, src))
	dst := t.TempDir()
	must(Extract(context.Background(), &buf, dst, Options{Whiteouts: true}))

	if got := readFile(t, filepath.Join(dst, "etc/app/conf")); got != "key=value\n" {
		t.Errorf("conf = %q", got)
	}
	if a, b := lstat(t, filepath.Join(dst, "etc/app/conf")), lstat(t, filepath.Join(dst, "etc/conf-link")); a.Ino != b.Ino {
		t.Error("the hardlink became a copy")
	}
	if l, err := os.Readlink(filepath.Join(dst, "etc/sym")); err != nil || l != "app/conf" {
		t.Errorf("symlink = %q, %v", l, err)
	}
	if st := lstat(t, filepath.Join(dst, "etc/app")); st.Mode&0o7777 != 0o750 {
		t.Errorf("dir mode = %o", st.Mode&0o7777)
	}
	if st := lstat(t, filepath.Join(dst, "run.sh")); st.Mode&0o7777 != 0o755 || st.Mtim.Sec != mtime.Unix() {
		t.Errorf("run.sh mode %o mtime %d", st.Mode&0o7777, st.Mtim.Sec)
	}
	if st := lstat(t, filepath.Join(dst, "pipe")); st.Mode&unix.S_IFMT != unix.S_IFIFO {
		t.Errorf("pipe is mode %o", st.Mode)
	}
	if v, err := lgetxattr(filepath.Join(src, "run.sh"), "user.note"); err == nil {
		if got, err := lgetxattr(filepath.Join(dst, "run.sh"), "user.note"); err != nil || got != v {
			t.Errorf("user.note = %q, %v; want %q", got, err, v)
		}
	}
	if !isRoot() {
		return
	}
	if st := lstat(t, filepath.Join(dst, "etc/gone")); st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0 {
		t.Errorf("whiteout is mode %o rdev %d", st.Mode, st.Rdev)
	}
	if !opaque(filepath.Join(dst, "opaque")) {
		t.Error("the opaque directory lost its mark")
	}
	if st := lstat(t, filepath.Join(dst, "etc/app/conf")); st.Uid != 1000 || st.Gid != 1001 {
		t.Errorf("owner %d:%d", st.Uid, st.Gid)
	}
	for _, name := range []string{"etc/.wh.gone", "opaque/.wh..wh..opq"} {
		if _, err := os.Lstat(filepath.Join(dst, name)); err == nil {
			t.Errorf("%s was extracted as a file", name)
		}
	}
}

// TestArchiveRefusesDevices: a real device node cannot be carried (the
// receiving side would refuse it anyway).
func TestArchiveRefusesDevices(t *testing.T) {
	t.Parallel()
	if !isRoot() {
		t.Skip("needs root to make a device node")
	}
	src := t.TempDir()
	if err := unix.Mknod(filepath.Join(src, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	if err := Archive(context.Background(), &bytes.Buffer{}, src); err == nil {
		t.Fatal("archived a device node")
	}
}
