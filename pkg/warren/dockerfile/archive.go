package dockerfile

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// archive is what ADD finds in a local source file.
type archive int

const (
	notArchive archive = iota
	tarArchive         // plain, gzip or bzip2: what the server can unpack
)

var (
	magicGzip  = []byte{0x1f, 0x8b}
	magicBzip2 = []byte("BZh")
	magicXz    = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	magicZstd  = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// archiveKind decides whether ADD src unpacks. Docker looks at the content,
// not the name, so this does too; a directory or a file that is not a tar
// (compressed or not) is copied as it is.
func (c *Context) archiveKind(src string) (archive, error) {
	matches, err := c.match(src)
	if err != nil {
		return notArchive, err
	}
	var found []string
	for _, m := range matches {
		if !m.info.Mode().IsRegular() {
			continue
		}
		kind, err := sniffArchive(c.abs(m.rel))
		if err != nil {
			return notArchive, err
		}
		if kind == tarArchive {
			found = append(found, m.rel)
		}
	}
	switch {
	case len(found) == 0:
		return notArchive, nil
	case len(matches) > 1:
		return notArchive, fmt.Errorf("matches several files including the archive %s; give each archive its own ADD", found[0])
	}
	return tarArchive, nil
}

// sniffArchive reads the start of a file to see if it is a tar archive the
// server can unpack. An xz or zstd tarball cannot be read with Go's
// standard library, so it is refused rather than copied packed, which
// would silently differ from Docker.
func sniffArchive(p string) (archive, error) {
	f, err := os.Open(p)
	if err != nil {
		return notArchive, fmt.Errorf("reading %s: %w", p, err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(8)
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(head, magicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return notArchive, nil
		}
		r = zr
	case bytes.HasPrefix(head, magicBzip2):
		r = bzip2.NewReader(br)
	case bytes.HasPrefix(head, magicXz), bytes.HasPrefix(head, magicZstd):
		if looksLikeTarball(p) {
			return notArchive, errors.New("xz and zstd compressed archives are not supported; use a .tar, .tar.gz or .tar.bz2")
		}
		return notArchive, nil
	}
	if _, err := tar.NewReader(r).Next(); err != nil {
		return notArchive, nil
	}
	return tarArchive, nil
}

// looksLikeTarball guesses from the name what an unreadable compressed file
// holds.
func looksLikeTarball(p string) bool {
	for _, ext := range []string{".tar.xz", ".txz", ".tar.zst", ".tzst"} {
		if strings.HasSuffix(strings.ToLower(p), ext) {
			return true
		}
	}
	return false
}
