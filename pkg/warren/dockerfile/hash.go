package dockerfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strconv"
)

// Hash is the cache key of "COPY src dest": the SDK's calculateFilesHash
// (with resolveSymlinks off, the SDK's default), byte for byte, so a file
// set uploaded by either the SDK or warren is found again by the other.
//
// It is SHA-256 over "COPY <src> <dest>" and then, per selected path in
// order: the relative path, the decimal st_mode, the decimal size, and the
// file's bytes (regular files) or the link target (symbolic links).
// Owners and times are left out so the key is the same on every machine.
func (c *Context) Hash(src, dest string) (string, error) {
	entries, err := c.collect(src)
	if err != nil {
		return "", err
	}
	if len(entries) == 0 {
		return "", fmt.Errorf("no files found for %q in %s", src, c.dir)
	}
	h := sha256.New()
	io.WriteString(h, "COPY "+src+" "+dest)
	for _, e := range entries {
		if err := c.hashEntry(h, e); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (c *Context) hashEntry(h hash.Hash, e entry) error {
	io.WriteString(h, e.rel)
	p := c.abs(e.rel)
	if e.info.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return fmt.Errorf("hashing %s: %w", e.rel, err)
		}
		hashStat(h, e.info)
		io.WriteString(h, target)
		return nil
	}
	// The SDK stats again at hashing time rather than reusing the listing.
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("hashing %s: %w", e.rel, err)
	}
	hashStat(h, fi)
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("hashing %s: %w", e.rel, err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("hashing %s: %w", e.rel, err)
	}
	return nil
}

func hashStat(h hash.Hash, fi fs.FileInfo) {
	io.WriteString(h, strconv.FormatUint(uint64(unixMode(fi.Mode())), 10))
	io.WriteString(h, strconv.FormatInt(fi.Size(), 10))
}

// unixMode rebuilds st_mode (file type bits included), which is what
// Node's stats.mode holds and the SDK hashes, from Go's portable FileMode.
func unixMode(m fs.FileMode) uint32 {
	v := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	switch {
	case m.IsDir():
		v |= 0o040000
	case m&fs.ModeSymlink != 0:
		v |= 0o120000
	case m&fs.ModeNamedPipe != 0:
		v |= 0o010000
	case m&fs.ModeSocket != 0:
		v |= 0o140000
	case m&fs.ModeCharDevice != 0:
		v |= 0o020000
	case m&fs.ModeDevice != 0:
		v |= 0o060000
	default:
		v |= 0o100000
	}
	return v
}
