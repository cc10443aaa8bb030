package layer

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// hostileTar writes entries built by add into a tar.
func hostileTar(t *testing.T, add func(tw *tar.Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add(tw)
	// A header that promises more than follows (the petabyte case) makes
	// Close complain; the bytes written so far are the archive wanted.
	_ = tw.Close()
	return buf.Bytes()
}

func put(t *testing.T, tw *tar.Writer, hdr *tar.Header, body []byte) {
	t.Helper()
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(body); err != nil {
		t.Fatal(err)
	}
}

// TestExtractHostile: archives built to hurt the host each fail with a
// clear error, within seconds, before they fill the disk or the inode
// table. (Store.Create throws the scratch directory away; TestStoreCreate
// shows nothing is left.)
func TestExtractHostile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  Options
		tar   func(tw *tar.Writer)
		class error
		msg   string
	}{
		{"many tiny files", Options{}, func(tw *tar.Writer) {
			for i := range 100_000 {
				put(t, tw, &tar.Header{Name: "f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String(), Mode: 0o644, Size: 0, Typeflag: tar.TypeReg}, nil)
			}
		}, errdefs.ErrInvalidArgument, "more than 50000 entries"},
		{"4096 deep", Options{}, func(tw *tar.Writer) {
			put(t, tw, &tar.Header{Name: strings.Repeat("d/", 4096) + "f", Mode: 0o644, Typeflag: tar.TypeReg}, nil)
		}, errdefs.ErrInvalidArgument, "directories deep"},
		{"forged overlay redirect", Options{}, func(tw *tar.Writer) {
			put(t, tw, &tar.Header{Name: "d/", Mode: 0o755, Typeflag: tar.TypeDir,
				PAXRecords: map[string]string{"SCHILY.xattr.trusted.overlay.redirect": "/etc"}}, nil)
		}, errdefs.ErrInvalidArgument, "trusted.overlay.redirect"},
		{"forged opaque marker", Options{Whiteouts: true}, func(tw *tar.Writer) {
			put(t, tw, &tar.Header{Name: "d/", Mode: 0o755, Typeflag: tar.TypeDir,
				PAXRecords: map[string]string{"SCHILY.xattr.trusted.overlay.opaque": "y"}}, nil)
		}, errdefs.ErrInvalidArgument, "trusted.overlay.opaque"},
		{"hardlink to a later entry", Options{}, func(tw *tar.Writer) {
			put(t, tw, &tar.Header{Name: "link", Linkname: "later", Typeflag: tar.TypeLink}, nil)
			put(t, tw, &tar.Header{Name: "later", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}, []byte("x"))
		}, errdefs.ErrInvalidArgument, "not an earlier entry"},
		{"over the size limit", Options{Limit: 1 << 20}, func(tw *tar.Writer) {
			put(t, tw, &tar.Header{Name: "big", Mode: 0o644, Size: 2 << 20, Typeflag: tar.TypeReg}, make([]byte, 2<<20))
		}, errdefs.ErrNoSpace, "exceeds the limit"},
		{"bigger than the disk", Options{}, func(tw *tar.Writer) {
			// The header alone claims a petabyte: refused before a byte is written.
			tw.WriteHeader(&tar.Header{Name: "huge", Mode: 0o644, Size: 1 << 50, Typeflag: tar.TypeReg})
		}, errdefs.ErrNoSpace, "disk almost full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := hostileTar(t, tc.tar)
			dir := t.TempDir()
			err := Extract(context.Background(), bytes.NewReader(data), dir, tc.opts)
			if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.class, tc.msg)
			}
		})
	}
}

// TestExtractSparseCountsFullSize: a sparse entry of a few bytes on the
// wire that expands to 64 MiB counts 64 MiB against the limit.
func TestExtractSparseCountsFullSize(t *testing.T) {
	t.Parallel()
	// A GNU sparse file: 64 MiB of which only one byte is data. Go's tar
	// writer cannot make one, so the header is written by hand.
	data := gnuSparse(t, 64<<20)
	if len(data) > 4096 {
		t.Fatalf("the test archive is %d bytes; want a tiny one", len(data))
	}
	dir := t.TempDir()
	err := Extract(context.Background(), bytes.NewReader(data), dir, Options{Limit: 16 << 20})
	if !errors.Is(err, errdefs.ErrNoSpace) {
		t.Fatalf("err = %v, want the 16 MiB limit to stop a 64 MiB sparse file", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "sparse")); err == nil && fi.Size() > 0 {
		t.Errorf("%d bytes were written", fi.Size())
	}
}

// gnuSparse returns a tar holding one old-GNU sparse file "sparse" of
// size bytes whose only data is its last byte.
func gnuSparse(t testing.TB, size int64) []byte {
	t.Helper()
	hdr := make([]byte, 512)
	octal := func(off, n int, v int64) {
		s := []byte(strings.Repeat("0", n-1))
		o := []byte(strconv.FormatInt(v, 8))
		copy(s[len(s)-len(o):], o)
		copy(hdr[off:], s)
	}
	copy(hdr, "sparse")
	octal(100, 8, 0o644)
	octal(108, 8, 0)
	octal(116, 8, 0)
	octal(124, 12, 512) // the data on the wire: one padded block
	octal(136, 12, 0)
	hdr[156] = 'S'
	copy(hdr[257:], "ustar  \x00")
	octal(386, 12, size-1) // one fragment: offset, then length
	octal(398, 12, 1)
	octal(483, 12, size) // the real size
	copy(hdr[148:156], "        ")
	var sum int64
	for _, b := range hdr {
		sum += int64(b)
	}
	copy(hdr[148:], fmt.Sprintf("%06o\x00 ", sum))
	data := make([]byte, 512)
	data[0] = 'x'
	return append(append(hdr, data...), make([]byte, 1024)...)
}

// TestExpansionStopsBombs: a gzip of zeros is refused once it has expanded
// past the floor at more than bombRatio to one; ordinary content passes.
func TestExpansionStopsBombs(t *testing.T) {
	t.Parallel()
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zeros := make([]byte, 1<<20)
	for range 256 { // 256 MiB of zeros, about 256 KiB compressed
		zw.Write(zeros)
	}
	zw.Close()
	gz := func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }
	r, err := Expansion(bytes.NewReader(bomb.Bytes()), gz)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, r)
	if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "compression bomb") || n > 2*bombFloor {
		t.Fatalf("read %d bytes, err %v; want a compression-bomb error near %d bytes", n, err, bombFloor)
	}
	var plain bytes.Buffer
	zw = gzip.NewWriter(&plain)
	zw.Write([]byte(strings.Repeat("some text that compresses moderately well 0123456789\n", 1000)))
	zw.Close()
	r, _ = Expansion(bytes.NewReader(plain.Bytes()), gz)
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatalf("ordinary content: %v", err)
	}
}
