package builder

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// HasFiles reports whether the COPY sources with this hash were uploaded.
func (b *Builder) HasFiles(hash string) bool {
	if !validHash(hash) {
		return false
	}
	_, err := os.Stat(b.filePath(hash))
	return err == nil
}

// SaveFiles stores an upload of COPY sources (a gzip tar) under its hash.
// A partial upload never becomes visible: it is written aside and renamed.
func (b *Builder) SaveFiles(hash string, r io.Reader, limit int64) error {
	if !validHash(hash) {
		return invalid("invalid files hash %q", hash)
	}
	f, err := os.CreateTemp(b.opts.FilesDir, hash+".*.part")
	if err != nil {
		return fmt.Errorf("storing upload: %w", err)
	}
	defer os.Remove(f.Name())
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.ENOSPC) {
		return errdefs.New(errdefs.ErrNoSpace, "the server's disk is full")
	}
	if err != nil {
		return fmt.Errorf("storing upload: %w", err)
	}
	if n > limit {
		return invalid("the upload is larger than %d bytes", limit)
	}
	if err := os.Rename(f.Name(), b.filePath(hash)); err != nil {
		return fmt.Errorf("storing upload: %w", err)
	}
	return nil
}
