package park

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
)

// partMaxAge: a parked directory still being written or removed after
// this long was left by a node that died meanwhile.
const partMaxAge = time.Hour

// noteAttempt records how a take-over or park of sandbox id ended: after
// a failure the sweep leaves it for retryAfter.
func (r *Room) noteAttempt(id string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failedFor, id)
	if err == nil {
		delete(r.retryAt, id)
		return
	}
	r.retryAt[id] = time.Now().Add(retryAfter)
	if errors.Is(err, errdefs.ErrFailedPrecondition) {
		r.failedFor[id] = err
	}
}

// failedForGood returns the error that ended the last take-over of
// sandbox id, if trying again cannot cure it and retryAt is not yet.
func (r *Room) failedForGood(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.failedFor[id]; err != nil && time.Now().Before(r.retryAt[id]) {
		return err
	}
	return nil
}

// dueForRetry says whether the sweep may try sandbox id now.
func (r *Room) dueForRetry(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.retryAt[id]
	return !ok || time.Now().After(at)
}

// sweepDue says whether the slower part of the sweep is due, and if so
// starts its period.
func (r *Room) sweepDue() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.swept) < sweepEvery {
		return false
	}
	r.swept = time.Now()
	for id, at := range r.retryAt {
		if time.Since(at) > time.Hour {
			delete(r.retryAt, id) // long gone
			delete(r.failedFor, id)
		}
	}
	return true
}

// parkUnparked parks the paused sandboxes of this node, records (of
// the store) that it holds, that are not parked (a park that failed, a
// sandbox found paused at a restart) or whose parked copy lacks what
// they now have. It does not wait for a sandbox that is busy.
func (r *Room) parkUnparked(records []*store.Sandbox) {
	for _, sb := range records {
		id := sb.ID
		if sb.State == store.SandboxPaused && r.m.Holds(id) && r.dueForRetry(id) {
			// It checks the state and the flag holding the sandbox.
			r.m.Go(func(ctx context.Context) { r.park(ctx, id, false) })
		}
	}
}

// collectParked removes parked directories that nothing will read: those
// of sandboxes that are gone, those this node's sandboxes no longer need
// (resumed, or never recorded parked), and what a node that died while
// writing or removing one left. A sandbox busy with a lifecycle operation
// is left for the next sweep.
func (r *Room) collectParked(ctx context.Context) {
	root := filepath.Join(r.opts.SharedDir, parkedDir)
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
		live := r.m.WithSandbox(name, false, func(sb *store.Sandbox, _ runtime.Backend, killed bool) {
			if !sb.Parked && !killed {
				r.Unparked(name)
			}
		})
		if live {
			continue
		}
		if sb, err := r.opts.Store.GetSandbox(ctx, name); errdefs.IsNotFound(err) ||
			(err == nil && sb.Node == r.opts.NodeName && !sb.Parked && sb.State != store.SandboxPaused) {
			r.Unparked(name)
		}
	}
}
