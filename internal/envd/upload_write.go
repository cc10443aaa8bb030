package envd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/envd/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// copyBuffer is the chunk size uploads are streamed to disk with.
const copyBuffer = 256 * 1024

// writeUpload streams src into path: parents are created for the user, the
// file is truncated or created, handed to the user, and its metadata
// replaced by md.
func writeUpload(path string, src io.Reader, u *users.User, md map[string]string) (uploadResult, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return uploadResult{}, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path '%s' is a directory", path))
	}
	if err := filesystem.MkdirAllOwned(filepath.Dir(path), u); err != nil {
		return uploadResult{}, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return uploadResult{}, fmt.Errorf("opening %s for writing: %w", path, err)
	}
	_, copyErr := io.CopyBuffer(f, bodyReader{src}, make([]byte, copyBuffer))
	closeErr := f.Close()
	if copyErr != nil {
		return uploadResult{}, fmt.Errorf("writing %s: %w", path, copyErr)
	}
	if closeErr != nil {
		return uploadResult{}, fmt.Errorf("writing %s: %w", path, closeErr)
	}
	if err := filesystem.Chown(path, u); err != nil {
		return uploadResult{}, err
	}
	if err := filesystem.ReplaceMetadata(path, md); err != nil {
		return uploadResult{}, err
	}
	return uploadResult{Path: path, Name: filepath.Base(path), Type: "file", Metadata: md}, nil
}

// bodyReader tags read errors with errBadBody, so a client that aborts or
// sends corrupt gzip gets a 400 while disk errors (ENOSPC → 507) keep their
// own class.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%w: %w", errBadBody, err)
	}
	return n, err
}
