package layer

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// ent is a tar entry for tests; zero fields get sensible defaults.
type ent struct {
	name, body, link string
	typ              byte
	mode             int64
	uid, gid         int
	pax              map[string]string
	mtime            time.Time
}

func file(name, body string) ent { return ent{name: name, body: body, typ: tar.TypeReg} }
func dir(name string) ent        { return ent{name: name, typ: tar.TypeDir} }
func symlink(name, target string) ent {
	return ent{name: name, link: target, typ: tar.TypeSymlink}
}
func hardlink(name, target string) ent { return ent{name: name, link: target, typ: tar.TypeLink} }

func tarOf(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode,
			Uid: e.uid, Gid: e.gid, PAXRecords: e.pax, ModTime: e.mtime, Format: tar.FormatPAX}
		if h.Mode == 0 {
			h.Mode = 0o644
			if e.typ == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if h.ModTime.IsZero() {
			h.ModTime = time.Unix(1600000000, 0)
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("tar header %s: %v", e.name, err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func extract(t testing.TB, opts Options, ents ...ent) (string, error) {
	t.Helper()
	d := t.TempDir()
	return d, Extract(context.Background(), bytes.NewReader(tarOf(t, ents...)), d, opts)
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

func lstat(t testing.TB, p string) *unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatalf("lstat %s: %v", p, err)
	}
	return &st
}

func isRoot() bool { return os.Geteuid() == 0 }

func TestExtractTree(t *testing.T) {
	mtime := time.Unix(1234567890, 0)
	d, err := extract(t, Options{},
		dir("./"),
		ent{name: "bin/", typ: tar.TypeDir, mode: 0o755, mtime: mtime},
		ent{name: "bin/su", body: "suid", typ: tar.TypeReg, mode: 0o4755, mtime: mtime},
		hardlink("bin/su2", "bin/su"),
		symlink("lib", "usr/lib"),
		symlink("abs", "/etc/passwd"),
		file("usr/lib/libc.so", "libc"), // parents made implicitly
		ent{name: "run/fifo", typ: tar.TypeFifo, mode: 0o600},
		ent{name: "ro/", typ: tar.TypeDir, mode: 0o555, mtime: mtime},
		file("ro/inside", "x"), // written although ro is read-only
		file("a/../b", "cleaned"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(d, "usr/lib/libc.so")); got != "libc" {
		t.Errorf("libc.so = %q", got)
	}
	if got := readFile(t, filepath.Join(d, "b")); got != "cleaned" {
		t.Errorf("b = %q", got)
	}
	su := lstat(t, filepath.Join(d, "bin/su"))
	if su.Mode&0o7777 != 0o4755 {
		t.Errorf("bin/su mode = %o, want 4755", su.Mode&0o7777)
	}
	if time.Unix(su.Mtim.Unix()) != mtime {
		t.Errorf("bin/su mtime = %v", time.Unix(su.Mtim.Unix()))
	}
	if su2 := lstat(t, filepath.Join(d, "bin/su2")); su2.Ino != su.Ino {
		t.Error("bin/su2 is not a hardlink of bin/su")
	}
	for link, want := range map[string]string{"lib": "usr/lib", "abs": "/etc/passwd"} {
		if got, err := os.Readlink(filepath.Join(d, link)); err != nil || got != want {
			t.Errorf("readlink %s = %q, %v; want %q", link, got, err, want)
		}
	}
	if st := lstat(t, filepath.Join(d, "run/fifo")); st.Mode&unix.S_IFMT != unix.S_IFIFO {
		t.Errorf("run/fifo mode = %o", st.Mode)
	}
	ro := lstat(t, filepath.Join(d, "ro"))
	if ro.Mode&0o7777 != 0o555 || time.Unix(ro.Mtim.Unix()) != mtime {
		t.Errorf("ro mode %o mtime %v: directory metadata not applied last", ro.Mode&0o7777, time.Unix(ro.Mtim.Unix()))
	}
	if bin := lstat(t, filepath.Join(d, "bin")); time.Unix(bin.Mtim.Unix()) != mtime {
		t.Errorf("bin mtime = %v, bumped by its children", time.Unix(bin.Mtim.Unix()))
	}
	os.Chmod(filepath.Join(d, "ro"), 0o755) // let TempDir cleanup in as non-root
}

func TestExtractOwnership(t *testing.T) {
	uid, gid := 1234, 5678
	tests := []struct {
		name             string
		opts             Options
		wantUID, wantGID uint32
	}{
		{"from tar", Options{}, 1000, 1001},
		{"override", Options{UID: &uid, GID: &gid}, 1234, 5678},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := extract(t, tc.opts,
				ent{name: "f", typ: tar.TypeReg, body: "x", uid: 1000, gid: 1001, mode: 0o644},
				ent{name: "d/", typ: tar.TypeDir, uid: 1000, gid: 1001},
				ent{name: "l", typ: tar.TypeSymlink, link: "f", uid: 1000, gid: 1001},
			)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"f", "d", "l"} {
				st := lstat(t, filepath.Join(d, n))
				if !isRoot() {
					if int(st.Uid) != os.Geteuid() {
						t.Errorf("%s uid = %d, want ours when not root", n, st.Uid)
					}
					continue
				}
				if st.Uid != tc.wantUID || st.Gid != tc.wantGID {
					t.Errorf("%s owner = %d:%d, want %d:%d", n, st.Uid, st.Gid, tc.wantUID, tc.wantGID)
				}
			}
		})
	}
}

func TestExtractFileModeOverride(t *testing.T) {
	mode := os.FileMode(0o700)
	d, err := extract(t, Options{FileMode: &mode},
		ent{name: "f", typ: tar.TypeReg, body: "x", mode: 0o4777},
		ent{name: "d/", typ: tar.TypeDir, mode: 0o777},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"f", "d"} {
		if m := lstat(t, filepath.Join(d, n)).Mode & 0o7777; m != 0o700 {
			t.Errorf("%s mode = %o, want 700", n, m)
		}
	}
}

func TestExtractLaterEntriesWin(t *testing.T) {
	d, err := extract(t, Options{},
		file("a", "first"),
		file("a", "second"),
		file("f2l", "file"),
		symlink("f2l", "/etc"),
		symlink("l2f", "/etc/passwd"),
		file("l2f", "safe"), // must not write through to /etc/passwd
		file("d2f/child", "x"),
		file("d2f", "now a file"),
		file("f2d", "x"),
		dir("f2d"),
		file("f2d/child", "y"),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "second", "l2f": "safe", "d2f": "now a file", "f2d/child": "y"}
	for n, body := range want {
		if got := readFile(t, filepath.Join(d, n)); got != body {
			t.Errorf("%s = %q, want %q", n, got, body)
		}
	}
	if st := lstat(t, filepath.Join(d, "f2l")); st.Mode&unix.S_IFMT != unix.S_IFLNK {
		t.Errorf("f2l is not a symlink")
	}
}

func TestExtractMap(t *testing.T) {
	toApp := func(n string) (string, bool) {
		if strings.HasPrefix(n, "skip") {
			return "", false
		}
		return filepath.Join("app", n), true
	}
	d, err := extract(t, Options{Map: toApp},
		dir("."),
		file("src/main.go", "package main"),
		hardlink("src/link.go", "src/main.go"),
		file("skip.txt", "no"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(d, "app/src/link.go")); got != "package main" {
		t.Errorf("app/src/link.go = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(d, "app/skip.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("skipped entry exists: %v", err)
	}
	if _, err := extract(t, Options{Map: func(string) (string, bool) { return "../out", true }}, file("x", "x")); !errdefs.IsInvalidArgument(err) {
		t.Errorf("Map escaping the dir: err = %v, want invalid argument", err)
	}
}

func TestExtractWhiteouts(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		d, err := extract(t, Options{}, file(".wh.gone", ""), file("d/.wh..wh..opq", ""))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{".wh.gone", "d/.wh..wh..opq"} {
			if st := lstat(t, filepath.Join(d, n)); st.Mode&unix.S_IFMT != unix.S_IFREG {
				t.Errorf("%s is not a plain file", n)
			}
		}
	})
	t.Run("whiteout", func(t *testing.T) {
		d := t.TempDir()
		tr := tarOf(t, dir("d"), file("d/keep", "k"), file("d/.wh.old", ""),
			file("dir/x", "replaced by the whiteout"), file(".wh.dir", ""))
		err := Extract(context.Background(), bytes.NewReader(tr), d, Options{Whiteouts: true})
		if !isRoot() && errors.Is(err, unix.EPERM) {
			t.Skipf("this kernel lets only root make whiteouts: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"d/old", "dir"} {
			st := lstat(t, filepath.Join(d, n))
			if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0 {
				t.Errorf("%s: mode %o rdev %d, want a 0/0 char device", n, st.Mode, st.Rdev)
			}
		}
		for _, n := range []string{"d/.wh.old", ".wh.dir"} {
			if _, err := os.Lstat(filepath.Join(d, n)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("marker %s written: %v", n, err)
			}
		}
		if got := readFile(t, filepath.Join(d, "d/keep")); got != "k" {
			t.Errorf("d/keep = %q", got)
		}
	})
	t.Run("opaque", func(t *testing.T) {
		if !isRoot() {
			t.Skip("trusted.* xattrs need root")
		}
		d, err := extract(t, Options{Whiteouts: true}, file("d/keep", "k"), file("d/.wh..wh..opq", ""),
			file("implicit/.wh..wh..opq", ""))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"d", "implicit"} {
			buf := make([]byte, 8)
			sz, err := unix.Lgetxattr(filepath.Join(d, n), opaqueXattr, buf)
			if err != nil || string(buf[:sz]) != "y" {
				t.Errorf("%s opaque xattr = %q, %v", n, buf[:sz], err)
			}
			if _, err := os.Lstat(filepath.Join(d, n, opaqueMarker)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("marker written in %s: %v", n, err)
			}
		}
	})
}

func TestExtractXattrs(t *testing.T) {
	pax := map[string]string{
		"SCHILY.xattr.user.kept":           "1",
		"SCHILY.xattr.trusted.other":       "x",
		"SCHILY.xattr.security.selinux":    "system_u:object_r:shadow_t:s0",
		"SCHILY.xattr.security.capability": string(capNetBindService()),
	}
	d, err := extract(t, Options{}, ent{name: "f", typ: tar.TypeReg, body: "x", mode: 0o755, pax: pax},
		ent{name: "dir/", typ: tar.TypeDir, pax: pax})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"f", "dir"} {
		p := filepath.Join(d, n)
		buf := make([]byte, 128)
		if sz, err := unix.Lgetxattr(p, "user.kept", buf); err == unix.ENOTSUP {
			t.Log("no user xattrs on this filesystem")
		} else if err != nil || string(buf[:sz]) != "1" {
			t.Errorf("%s user.kept = %q, %v", n, buf[:sz], err)
		}
		for _, x := range []string{"trusted.other", "security.selinux"} {
			if sz, err := unix.Lgetxattr(p, x, buf); err == nil && !(x == "security.selinux" && selinuxLabels()) {
				t.Errorf("%s: forbidden xattr %s = %q was written", n, x, buf[:sz])
			}
		}
	}
	if isRoot() {
		if _, err := unix.Lgetxattr(filepath.Join(d, "f"), "security.capability", make([]byte, 64)); err != nil {
			t.Errorf("security.capability not kept: %v", err)
		}
	}
}

// capNetBindService is a VFS_CAP_REVISION_2 value granting CAP_NET_BIND_SERVICE.
func capNetBindService() []byte {
	return []byte{0, 0, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
}

func selinuxLabels() bool {
	_, err := os.Stat("/sys/fs/selinux/enforce")
	return err == nil
}

func TestExtractRejects(t *testing.T) {
	tests := []struct {
		name string
		ents func(sentinel string) []ent
	}{
		{"absolute path", func(s string) []ent { return []ent{file(s+"/pwned", "x")} }},
		{"dot-dot", func(string) []ent { return []ent{file("../pwned", "x")} }},
		{"dot-dot inside", func(string) []ent { return []ent{file("a/../../pwned", "x")} }},
		{"char device", func(string) []ent { return []ent{{name: "null", typ: tar.TypeChar}} }},
		{"block device", func(string) []ent { return []ent{{name: "sda", typ: tar.TypeBlock}} }},
		{"write through absolute symlink", func(s string) []ent {
			return []ent{symlink("link", s), file("link/pwned", "x")}
		}},
		{"write through relative symlink", func(s string) []ent {
			return []ent{symlink("link", "../../../../../../../../.."+s), file("link/pwned", "x")}
		}},
		{"mkdir through symlink", func(s string) []ent { return []ent{symlink("link", s), dir("link/pwned")} }},
		{"symlink through symlink", func(s string) []ent {
			return []ent{symlink("link", s), symlink("link/pwned", "/")}
		}},
		{"hardlink to host file", func(string) []ent { return []ent{hardlink("passwd", "/etc/passwd")} }},
		{"hardlink out", func(string) []ent { return []ent{hardlink("x", "../pwned")} }},
		{"hardlink to unknown", func(string) []ent { return []ent{hardlink("x", "nothere")} }},
		{"hardlink through symlink", func(s string) []ent {
			return []ent{symlink("link", s), file("f", "x"), hardlink("link/pwned", "f")}
		}},
		{"whiteout through symlink", func(s string) []ent { return []ent{symlink("link", s), file("link/.wh.pwned", "")} }},
		{"opaque through symlink", func(s string) []ent { return []ent{symlink("link", s), file("link/.wh..wh..opq", "")} }},
		{"root as file", func(string) []ent { return []ent{file(".", "x")} }},
		// The kernel's limits are the archive's fault, not the host's.
		{"name over NAME_MAX", func(string) []ent { return []ent{file(strings.Repeat("n", 256), "x")} }},
		{"directory name over NAME_MAX", func(string) []ent { return []ent{file(strings.Repeat("d", 300)+"/f", "x")} }},
		{"hardlink target over NAME_MAX", func(string) []ent { return []ent{hardlink("x", strings.Repeat("t", 256))} }},
		{"symlink target over PATH_MAX", func(string) []ent { return []ent{symlink("l", strings.Repeat("a/", 2048))} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sentinel := t.TempDir()
			d := t.TempDir()
			err := Extract(context.Background(), bytes.NewReader(tarOf(t, tc.ents(sentinel)...)), d, Options{Whiteouts: true})
			if !errdefs.IsInvalidArgument(err) {
				t.Errorf("err = %v, want invalid argument", err)
			}
			if ents, _ := os.ReadDir(sentinel); len(ents) != 0 {
				t.Errorf("wrote outside the layer: %v", ents)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(d), "pwned")); err == nil {
				t.Error("wrote next to the layer")
			}
		})
	}
}

// TestExtractXattrTooLarge: an xattr the kernel refuses as too large is
// the archive's fault (a 400), not the host's.
func TestExtractXattrTooLarge(t *testing.T) {
	probe := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(probe, "user.probe", []byte("1"), 0); err != nil {
		t.Skipf("this filesystem keeps no user xattrs: %v", err)
	}
	_, err := extract(t, Options{}, ent{name: "f", typ: tar.TypeReg, body: "x",
		pax: map[string]string{"SCHILY.xattr.user.big": strings.Repeat("v", 70000)}})
	if !errdefs.IsInvalidArgument(err) {
		t.Errorf("err = %v, want invalid argument", err)
	}
}

func TestExtractRejectMessageNamesEntry(t *testing.T) {
	_, err := extract(t, Options{}, file("../../etc/shadow", "x"))
	if err == nil || !strings.Contains(err.Error(), "../../etc/shadow") {
		t.Errorf("err = %v, want it to name the entry", err)
	}
}

func TestExtractLimit(t *testing.T) {
	_, err := extract(t, Options{Limit: 10}, file("a", "12345"), file("b", "123456"))
	if !errors.Is(err, errdefs.ErrNoSpace) {
		t.Errorf("err = %v, want ErrNoSpace", err)
	}
	if _, err := extract(t, Options{Limit: 11}, file("a", "12345"), file("b", "123456")); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

func TestExtractDiskFull(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root to mount a small tmpfs")
	}
	d := t.TempDir()
	if err := unix.Mount("tmpfs", d, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	defer unix.Unmount(d, unix.MNT_DETACH)
	big := strings.Repeat("x", 1<<20)
	err := Extract(context.Background(), bytes.NewReader(tarOf(t, file("big", big))), d, Options{})
	if !errors.Is(err, errdefs.ErrNoSpace) {
		t.Errorf("err = %v, want ErrNoSpace", err)
	}
}

func TestExtractCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Extract(ctx, bytes.NewReader(tarOf(t, file("a", "x"))), t.TempDir(), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestExtractMalformed(t *testing.T) {
	garbage := bytes.Repeat([]byte{0xff}, 1024)
	err := Extract(context.Background(), bytes.NewReader(garbage), t.TempDir(), Options{})
	if !errdefs.IsInvalidArgument(err) {
		t.Errorf("err = %v, want invalid argument", err)
	}
	trunc := tarOf(t, file("a", strings.Repeat("x", 4096)))[:1024]
	if err := Extract(context.Background(), bytes.NewReader(trunc), t.TempDir(), Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: err = %v, want unexpected EOF", err)
	}
}

func TestExtractImplicitParentsIgnoreUmask(t *testing.T) {
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	d, err := extract(t, Options{}, file("a/b/c", "x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "a/b"} {
		if m := lstat(t, filepath.Join(d, n)).Mode & 0o7777; m != 0o755 {
			t.Errorf("%s mode = %o, want 755", n, m)
		}
	}
}
