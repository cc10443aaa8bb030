package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
)

// What is kept of a killed sandbox's log: its last lines, for a while, so
// that the logs of one that died (its start command crashed, the host
// killed it for its memory) can be read after warren removed it.
const (
	endedEntries   = 1000      // newest lines kept per sandbox
	endedBytes     = 256 << 10 // and at most this much of them
	endedSandboxes = 100       // sandboxes whose lines are kept
	endedRetention = time.Hour // how long they are kept
)

// Logs returns the entries of a sandbox's log that q selects: envd's own
// records and its start command's output, dated. A paused sandbox's log is
// read as it stands; a killed one's last lines stay for endedRetention.
func (m *Manager) Logs(ctx context.Context, id string, q sandboxlog.Query) ([]sandboxlog.Entry, error) {
	e, err := m.get(id)
	if err != nil {
		if entries, ok := m.ended.get(id, time.Now()); ok {
			return sandboxlog.Filter(entries, q), nil
		}
		return nil, err
	}
	e.mu.Lock()
	backend := e.backend
	q.Fallback = e.sb.StartedAt
	e.mu.Unlock()
	entries, err := readLog(ctx, backend, id, q)
	if errdefs.IsNotFound(err) {
		// Killed since m.get: its lines were kept first.
		if entries, ok := m.ended.get(id, time.Now()); ok {
			return sandboxlog.Filter(entries, q), nil
		}
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

// keepEndedLog saves the last lines of a sandbox about to be destroyed.
// Callers hold e.mu.
func (m *Manager) keepEndedLog(ctx context.Context, e *entry) {
	q := sandboxlog.Query{Backward: true, Limit: endedEntries, Fallback: e.sb.StartedAt}
	newest, err := readLog(ctx, e.backend, e.sb.ID, q)
	if err != nil {
		log.G(ctx).Warn("keeping the log of a killed sandbox", "sandbox", e.sb.ID, "err", err)
		return
	}
	size := 0
	for i, en := range newest {
		if size += len(en.Raw) + len(en.Message); size > endedBytes {
			newest = newest[:i]
			break
		}
	}
	slices.Reverse(newest)
	m.ended.put(e.sb.ID, newest, time.Now())
}

// endedLogs holds the kept lines of killed sandboxes, oldest first.
type endedLogs struct {
	mu   sync.Mutex
	byID map[string]endedLog
}

type endedLog struct {
	at      time.Time
	entries []sandboxlog.Entry
}

func (l *endedLogs) put(id string, entries []sandboxlog.Entry, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string]endedLog{}
	}
	l.pruneLocked(now)
	for len(l.byID) >= endedSandboxes {
		oldest := ""
		for k, v := range l.byID {
			if oldest == "" || v.at.Before(l.byID[oldest].at) {
				oldest = k
			}
		}
		delete(l.byID, oldest)
	}
	l.byID[id] = endedLog{at: now, entries: entries}
}

func (l *endedLogs) get(id string, now time.Time) ([]sandboxlog.Entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pruneLocked(now)
	e, ok := l.byID[id]
	return e.entries, ok
}

func (l *endedLogs) pruneLocked(now time.Time) {
	for k, v := range l.byID {
		if now.Sub(v.at) > endedRetention {
			delete(l.byID, k)
		}
	}
}
