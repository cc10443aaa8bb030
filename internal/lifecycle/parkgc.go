package lifecycle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// partMaxAge: a parked directory still being written or removed after
// this long was left by a node that died meanwhile.
const partMaxAge = time.Hour

// errAgain: the sandbox changed hands while the caller waited; look it
// up again.
var errAgain = errors.New("sandbox taken over meanwhile")

// noteAttempt records how a take-over or park of sandbox id ended: after
// a failure the sweep leaves it for retryAfter.
func (m *Manager) noteAttempt(id string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.parking.failedFor, id)
	if err == nil {
		delete(m.parking.retryAt, id)
		return
	}
	m.parking.retryAt[id] = time.Now().Add(retryAfter)
	if errors.Is(err, errdefs.ErrFailedPrecondition) {
		m.parking.failedFor[id] = err
	}
}

// failedForGood returns the error that ended the last take-over of
// sandbox id, if trying again cannot cure it and retryAt is not yet.
func (m *Manager) failedForGood(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.parking.failedFor[id]; err != nil && time.Now().Before(m.parking.retryAt[id]) {
		return err
	}
	return nil
}

// dueForRetry says whether the sweep may try sandbox id now.
func (m *Manager) dueForRetry(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.parking.retryAt[id]
	return !ok || time.Now().After(at)
}

// sweepDue says whether the slower part of the sweep is due, and if so
// starts its period.
func (m *Manager) sweepDue() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.parking.swept) < sweepEvery {
		return false
	}
	m.parking.swept = time.Now()
	for id, at := range m.parking.retryAt {
		if time.Since(at) > time.Hour {
			delete(m.parking.retryAt, id) // long gone
			delete(m.parking.failedFor, id)
		}
	}
	return true
}

// parkUnparked parks the paused sandboxes of this node that are not
// parked: a park that failed, or a sandbox found paused at a restart.
func (m *Manager) parkUnparked() {
	m.mu.Lock()
	var ids []string
	for id, e := range m.live {
		if !e.running.Load() {
			ids = append(ids, id)
		}
	}
	m.mu.Unlock()
	for _, id := range ids {
		if m.dueForRetry(id) {
			// It checks the state and the flag under e.mu.
			m.goBackground(func(ctx context.Context) { m.park(ctx, id, false) })
		}
	}
}

// collectParked removes parked directories that nothing will read: those
// of sandboxes that are gone, those this node's sandboxes no longer need
// (resumed, or never recorded parked), and what a node that died while
// writing or removing one left. A sandbox busy with a lifecycle operation
// is left for the next sweep.
func (m *Manager) collectParked(ctx context.Context) {
	root := filepath.Join(m.opts.SharedDir, parkedDir)
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, de := range entries {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) > partMaxAge {
				_ = os.RemoveAll(filepath.Join(root, name))
			}
			continue
		}
		if e, err := m.get(name); err == nil {
			if e.mu.TryLock() {
				if !e.sb.Parked && !e.killed {
					m.removeParked(name)
				}
				e.mu.Unlock()
			}
			continue
		}
		if sb, err := m.opts.Store.GetSandbox(ctx, name); errdefs.IsNotFound(err) ||
			(err == nil && sb.Node == m.opts.NodeName && !sb.Parked && sb.State != store.SandboxPaused) {
			m.removeParked(name)
		}
	}
}
