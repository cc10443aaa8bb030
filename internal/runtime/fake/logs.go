package fake

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// WriteLog appends p to id's log, as if its init had written it.
func (b *Backend) WriteLog(id string, p []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	st.log = append(st.log, p...)
	return nil
}

// Logs implements runtime.Backend: what WriteLog wrote so far.
func (b *Backend) Logs(ctx context.Context, id string) (io.ReadSeekCloser, error) {
	if err := b.begin(ctx, OpLogs, id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return nil, fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	return logReader{bytes.NewReader(bytes.Clone(st.log))}, nil
}

type logReader struct{ *bytes.Reader }

func (logReader) Close() error { return nil }
