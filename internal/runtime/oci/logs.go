package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Logs implements runtime.Backend with init.log, where launch points the
// init's stdout and stderr on every start and restore.
func (b *Backend) Logs(ctx context.Context, id string) (io.ReadSeekCloser, error) {
	if _, err := b.record(id); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(b.dir(id), initLog))
	if errors.Is(err, os.ErrNotExist) {
		// Either a Destroy removed the directory since the record was
		// read, or the init has not been started yet.
		if _, err := b.record(id); err != nil {
			return nil, err
		}
		return emptyLog{bytes.NewReader(nil)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the log of sandbox %s: %w", id, err)
	}
	return f, nil
}

// emptyLog is the log of a sandbox whose init has written nothing yet.
type emptyLog struct{ *bytes.Reader }

func (emptyLog) Close() error { return nil }
