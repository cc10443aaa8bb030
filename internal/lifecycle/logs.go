package lifecycle

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
)

// Logs returns the entries of a live sandbox's log that q selects: envd's
// own records and its start command's output, dated. A paused sandbox's
// log is read as it stands. What is kept of a killed one's is the history
// room's (OnEnding).
func (m *Manager) Logs(ctx context.Context, id string, q sandboxlog.Query) ([]sandboxlog.Entry, error) {
	e, err := m.get(id)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	backend := e.backend
	q.Fallback = e.sb.StartedAt
	e.mu.Unlock()
	entries, err := readLog(ctx, backend, id, q)
	if errdefs.IsNotFound(err) {
		// Killed since m.get: the OnEnding hooks were told first.
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
	}
	return entries, err
}

func readLog(ctx context.Context, b runtime.Backend, id string, q sandboxlog.Query) ([]sandboxlog.Entry, error) {
	r, err := b.Logs(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("opening the log of sandbox %s: %w", id, err)
	}
	defer r.Close()
	entries, err := sandboxlog.Read(r, q)
	if err != nil {
		return nil, fmt.Errorf("reading the log of sandbox %s: %w", id, err)
	}
	return entries, nil
}

// ending tells the OnEnding hooks of e, which a kill is about to destroy.
// Callers hold e.mu.
func (m *Manager) ending(ctx context.Context, e *entry) {
	backend, id, started := e.backend, e.sb.ID, e.sb.StartedAt
	read := func(ctx context.Context, q sandboxlog.Query) ([]sandboxlog.Entry, error) {
		q.Fallback = started
		return readLog(ctx, backend, id, q)
	}
	for _, fn := range m.onEnding {
		fn(ctx, id, read)
	}
}

// OnEnding registers fn, before serving, to be told of each sandbox a kill
// is about to destroy, while its log can still be read with read: the
// rooms keep what must outlive a sandbox (its last log lines). fn runs
// under the sandbox's lock, so it must not call back into the manager.
func (m *Manager) OnEnding(fn func(ctx context.Context, id string, read func(context.Context, sandboxlog.Query) ([]sandboxlog.Entry, error))) {
	m.onEnding = append(m.onEnding, fn)
}
