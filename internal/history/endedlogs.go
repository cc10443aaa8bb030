// Package history is the room that keeps what outlives a sandbox's
// moments: the last log lines of killed sandboxes, for a while, so that
// the logs of one that died (its start command crashed, the host killed it
// for its memory) can be read after warren removed it; and the metrics
// history, samples of every running sandbox (Metrics), kept past its kill
// for the retention. It registers with the manager's OnEnding hook and
// reads the manager through the Machine and Sampled it declares; the
// manager knows nothing of it (internal/server wires the two).
package history

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
)

// What is kept of a killed sandbox's log.
const (
	endedEntries   = 1000      // newest lines kept per sandbox
	endedBytes     = 256 << 10 // and at most this much of them
	endedSandboxes = 100       // sandboxes whose lines are kept
	endedRetention = time.Hour // how long they are kept
)

// Machine reads live sandboxes' logs (*lifecycle.Manager).
type Machine interface {
	Logs(ctx context.Context, id string, q sandboxlog.Query) ([]sandboxlog.Entry, error)
}

// EndedLogs serves sandbox logs: a live sandbox's from the manager, a
// killed one's from what it kept at the kill.
type EndedLogs struct {
	m    Machine
	kept endedLogs
}

// NewEndedLogs returns the room over m; register its Keep with the
// manager's OnEnding before serving.
func NewEndedLogs(m Machine) *EndedLogs { return &EndedLogs{m: m} }

// Logs returns the entries of a sandbox's log that q selects; a killed
// sandbox's last lines stay for endedRetention.
func (l *EndedLogs) Logs(ctx context.Context, id string, q sandboxlog.Query) ([]sandboxlog.Entry, error) {
	entries, err := l.m.Logs(ctx, id, q)
	if !errdefs.IsNotFound(err) {
		return entries, err
	}
	// Killed, or killed since: Keep ran before the manager let go of it.
	if kept, ok := l.kept.get(id, time.Now()); ok {
		return sandboxlog.Filter(kept, q), nil
	}
	return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
}

// Keep saves the last lines of sandbox id, about to be destroyed, which
// read reads (the manager's OnEnding hook).
func (l *EndedLogs) Keep(ctx context.Context, id string, read func(context.Context, sandboxlog.Query) ([]sandboxlog.Entry, error)) {
	newest, err := read(ctx, sandboxlog.Query{Backward: true, Limit: endedEntries})
	if err != nil {
		log.G(ctx).Warn("keeping the log of a killed sandbox", "sandbox", id, "err", err)
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
	l.kept.put(id, newest, time.Now())
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
