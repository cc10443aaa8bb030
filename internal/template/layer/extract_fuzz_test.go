package layer

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// fuzzLimit caps what one fuzzed archive may write: small enough that a
// header promising gigabytes is refused at once instead of filling the disk.
const fuzzLimit = 1 << 20

// FuzzExtract feeds arbitrary tar streams to Extract and checks what a
// hostile archive must never achieve: a write outside the target directory,
// a device node, content past the limit, an unclassified error, or a hang.
// flags picks options as callers use them: bit 0 converts whiteouts (image
// layers), bit 1 maps "app/x" to "x" and skips "skip/...", bit 2 overrides
// file modes (COPY --chmod).
func FuzzExtract(f *testing.F) {
	mode := os.FileMode(0o640)
	seeds := [][]ent{
		{dir("d"), file("d/f", "hello"), symlink("d/l", "/etc/passwd"), hardlink("d/h", "d/f")},
		{file("../escape", "x")},
		{file("/abs", "x")},
		{symlink("link", "/"), file("link/etc/owned", "x")},
		{symlink("link", ".."), file("link/owned", "x")},
		{hardlink("h", "../../outside/canary")},
		{file("a", "1"), hardlink("b", "a"), file("a", "2")},
		{file(".wh.gone", ""), file("d/.wh..wh..opq", ""), file("d/.wh..", "")},
		{dir("ro"), file("ro/f", "x"), {name: "ro", typ: tar.TypeDir, mode: 0o500}},
		{{name: "dev", typ: tar.TypeChar}},
		{{name: "fifo", typ: tar.TypeFifo, mode: 0o600}},
		{{name: "x", typ: tar.TypeReg, body: "x", pax: map[string]string{"SCHILY.xattr.trusted.overlay.redirect": "/etc"}}},
		{{name: "x", typ: tar.TypeReg, body: "x", pax: map[string]string{"SCHILY.xattr.user.k": "v"}}},
		{dir("app"), file("app/x", "mapped"), file("skip/y", "skipped"), hardlink("app/z", "app/x")},
		{file(strings.Repeat("d/", 130)+"f", "deep")},
		{file(strings.Repeat("n", 256), "long name"), symlink("l", strings.Repeat("a/", 2048))},
		{{name: "x", typ: tar.TypeReg, body: "x", pax: map[string]string{"SCHILY.xattr.user.big": strings.Repeat("v", 70000)}}},
	}
	for i, s := range seeds {
		f.Add(tarOf(f, s...), uint8(i%8))
	}
	f.Add(gnuSparse(f, 64<<20), uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 1024), uint8(0))
	f.Add(tarOf(f, file("a", strings.Repeat("x", 4096)))[:1024], uint8(0))

	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		base := t.TempDir()
		root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
		for _, d := range []string{root, outside} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		canary := filepath.Join(outside, "canary")
		if err := os.WriteFile(canary, []byte("canary"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { makeRemovable(root) })

		opts := Options{Limit: fuzzLimit, Whiteouts: flags&1 != 0}
		if flags&2 != 0 {
			opts.Map = func(name string) (string, bool) {
				if name == "skip" || strings.HasPrefix(name, "skip/") {
					return "", false
				}
				if rest, ok := strings.CutPrefix(name, "app/"); ok {
					return rest, true
				}
				return name, true
			}
		}
		if flags&4 != 0 {
			opts.FileMode = &mode
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := Extract(ctx, bytes.NewReader(data), root, opts)
		if ctx.Err() != nil {
			t.Fatalf("Extract did not finish within 20s: %v", err)
		}
		checkExtractErr(t, err, opts.Whiteouts)
		checkOutside(t, base, outside, canary)
		checkInside(t, root, opts.Whiteouts)
	})
}

// checkExtractErr holds errors to the classes the API turns into a clear
// answer. A stream cut short is the caller's to classify: it knows
// whether the bytes came from a user or a registry connection.
func checkExtractErr(t *testing.T, err error, whiteouts bool) {
	t.Helper()
	switch {
	case err == nil, errdefs.IsInvalidArgument(err), errors.Is(err, errdefs.ErrNoSpace),
		errors.Is(err, io.ErrUnexpectedEOF):
	case whiteouts && os.Geteuid() != 0 && errors.Is(err, unix.EPERM):
		// Only root may make the 0/0 character devices of whiteouts.
	default:
		t.Fatalf("unclassified error: %v", err)
	}
}

// checkOutside: the directory beside the target is exactly as it was.
func checkOutside(t *testing.T, base, outside, canary string) {
	t.Helper()
	for dir, want := range map[string]string{base: "outside,root", outside: "canary"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if got := strings.Join(names, ","); got != want {
			t.Fatalf("%s holds %q after extraction, want %q", dir, got, want)
		}
	}
	var st unix.Stat_t
	if err := unix.Lstat(canary, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 || st.Size != int64(len("canary")) {
		t.Fatalf("the file outside the target changed: mode %o, %d links, %d bytes", st.Mode, st.Nlink, st.Size)
	}
	if b, err := os.ReadFile(canary); err != nil || string(b) != "canary" {
		t.Fatalf("the file outside the target changed: %q, %v", b, err)
	}
}

// checkInside: no device nodes but whiteouts, and no more content than the
// limit (each inode counted once, holes at their full size).
func checkInside(t *testing.T, root string, whiteouts bool) {
	t.Helper()
	var total int64
	seen := map[uint64]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFBLK:
			t.Fatalf("%s is a block device", p)
		case unix.S_IFCHR:
			if !whiteouts || st.Rdev != 0 {
				t.Fatalf("%s is a character device %d (whiteouts %v)", p, st.Rdev, whiteouts)
			}
		case unix.S_IFREG:
			if !seen[st.Ino] {
				seen[st.Ino] = true
				total += st.Size
			}
		case unix.S_IFDIR:
			// Reading it needs search and read bits even for a test run
			// without root.
			if os.Geteuid() != 0 {
				_ = os.Chmod(p, 0o755)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the extracted tree: %v", err)
	}
	if total > fuzzLimit {
		t.Fatalf("%d bytes written, over the limit of %d", total, fuzzLimit)
	}
}

// makeRemovable gives every directory under root its owner's bits back, so
// that t.TempDir's cleanup can delete what a fuzzed 0o000 directory holds.
func makeRemovable(root string) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}
