// Package snapshot is the room that makes snapshots and forks of live
// sandboxes and collects the snapshot directories nothing uses any more.
// It uses the sandbox manager through Machine, which it declares: the
// manager checkpoints a sandbox under its intent and starts sandboxes
// from a snapshot; the room decides where a snapshot goes, records it,
// and keeps the collector off the directories being made or stood on
// (lifecycle.SnapshotKeeper, which the manager asks).
package snapshot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Machine is what the room needs of the sandbox manager
// (*lifecycle.Manager).
type Machine interface {
	// Get returns a copy of sandbox id's record, taking over a sandbox
	// handed to this node parked first.
	Get(ctx context.Context, id string) (*store.Sandbox, error)
	// Checkpoint saves live sandbox id's state (disk, and memory where
	// its backend can) into the new directory dir, under the
	// snapshotting intent, and returns the snapshot and a copy of the
	// sandbox's record. record, when set, lists the snapshot while the
	// sandbox is still held; its snapshotted event follows.
	Checkpoint(ctx context.Context, id, dir string, record func(*store.Snapshot) error) (*store.Snapshot, *store.Sandbox, error)
	// CreateFrom starts a sandbox from snap (the caller holds the
	// collector off).
	CreateFrom(ctx context.Context, req sandbox.CreateRequest, tpl *store.Template, snap *store.Snapshot) (*store.Sandbox, error)
	// StandingLayers lists the layers this node's sandboxes stand on.
	StandingLayers(ctx context.Context) ([]string, error)
	// Go runs fn in the manager's background, which its Shutdown waits for.
	Go(fn func(ctx context.Context))
}

// Options configure the room.
type Options struct {
	Store store.Store
	// Dir holds the snapshots, one directory each (the manager's
	// SnapshotDir); "" takes none.
	Dir string
}

// Room makes snapshots and forks and collects snapshot directories.
type Room struct {
	m    Machine
	opts Options
	// mu: whatever makes or stands on a snapshot directory (a snapshot,
	// a fork, a create from a snapshot, a take-over) holds it for
	// reading until the store or a sandbox records that use; the
	// collector holds it for writing. Order: mu, then a sandbox's lock.
	mu sync.RWMutex
}

// New returns the room; register it with the manager (SetSnapshots)
// before Reconcile, which collects what a crash left.
func New(m Machine, opts Options) *Room { return &Room{m: m, opts: opts} }

// Hold keeps the collector off until the returned func is called.
func (r *Room) Hold() func() {
	r.mu.RLock()
	return r.mu.RUnlock
}

// newDir makes the snapshot directory's parent and names a new one.
func (r *Room) newDir() (string, error) {
	if r.opts.Dir == "" {
		return "", errdefs.New(errdefs.ErrNotImplemented, "this server keeps no snapshots (no snapshot directory)")
	}
	if err := os.MkdirAll(r.opts.Dir, 0o700); err != nil {
		return "", fmt.Errorf("creating snapshot directory: %w", err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return filepath.Join(r.opts.Dir, "snap"+hex.EncodeToString(b)), nil
}

// Snapshot saves a sandbox's state (disk, and memory where its backend
// can checkpoint) as a snapshot new sandboxes can start from. The sandbox
// keeps running (or stays paused); open connections to it are cut, as by
// a pause.
func (r *Room) Snapshot(ctx context.Context, id, name string) (*store.Snapshot, error) {
	if name != "" {
		if err := checkName(name); err != nil {
			return nil, err
		}
	}
	if _, err := r.m.Get(ctx, id); err != nil {
		return nil, err
	}
	// Until the store lists it, the new directory is unknown to the
	// collector, which would remove it (and the checkpoint the sandbox is
	// about to be restored from): hold the collector off until then.
	defer r.Hold()()
	dir, err := r.newDir()
	if err != nil {
		return nil, err
	}
	snap, _, err := r.m.Checkpoint(ctx, id, dir, func(snap *store.Snapshot) error {
		if name != "" {
			snap.Names = []string{name}
		}
		if err := r.opts.Store.CreateSnapshot(ctx, snap); err != nil {
			r.CollectLater()
			return fmt.Errorf("recording snapshot: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	log.G(ctx).Info("snapshot created", "sandbox", id, "snapshot", snap.ID, "memory", snap.Memory, "name", name)
	return snap, nil
}

// Fork snapshots a sandbox once (it carries on, or stays paused) and
// starts count independent sandboxes from that snapshot, each living
// timeout. The snapshot is not listed; its memory image goes when the
// forks are up and its disk layer when the last sandbox standing on it
// ends. An error means no fork was attempted; each fork's own failure is
// in its result.
func (r *Room) Fork(ctx context.Context, id string, count int, timeout time.Duration) ([]sandbox.ForkResult, error) {
	if count < 1 || count > sandbox.MaxForks {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("count must be between 1 and %d", sandbox.MaxForks))
	}
	if _, err := r.m.Get(ctx, id); err != nil {
		return nil, err
	}
	defer r.Hold()()
	defer r.CollectLater()
	dir, err := r.newDir()
	if err != nil {
		return nil, err
	}
	snap, src, err := r.m.Checkpoint(ctx, id, dir, nil)
	if err != nil {
		return nil, err
	}
	crashpoint.Hit("fork.snapshot")
	tpl, err := r.opts.Store.GetTemplate(ctx, snap.TemplateID)
	if err != nil {
		return nil, fmt.Errorf("template of sandbox %s: %w", id, err)
	}
	req := sandbox.CreateRequest{
		TemplateID:        src.TemplateID,
		Timeout:           timeout,
		Metadata:          src.Metadata,
		Secure:            src.EnvdAccessToken != "",
		AutoPause:         src.AutoPause,
		AutoPauseNoMemory: src.AutoPauseNoMemory,
		AutoResume:        src.AutoResume,
		Network:           src.Network.Clone(),
		APIKeyID:          src.APIKeyID,
		TeamID:            src.TeamID,
		AnyTeam:           true, // the source's own snapshot
	}
	out := make([]sandbox.ForkResult, count)
	next := make(chan int, count)
	for i := range out {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range forkWorkers(count, snap.MemoryMB) {
		wg.Go(func() {
			for i := range next {
				sb, err := r.m.CreateFrom(ctx, req, tpl, snap)
				if sb != nil {
					sb.Alias = src.Alias
				}
				out[i] = sandbox.ForkResult{Sandbox: sb, Err: err}
			}
		})
	}
	wg.Wait()
	return out, nil
}

// checkName accepts what the SDKs' name filter uses: letters, digits,
// '-', '_', '.', and one optional ':tag' and 'team/' prefix.
func checkName(name string) error {
	ok := len(name) <= 128
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("-_.:/", r):
		default:
			ok = false
		}
	}
	if !ok || name == "" {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("invalid snapshot name %q: use up to 128 letters, digits, '-', '_', '.', ':' and '/'", name))
	}
	return nil
}

// ListSnapshots returns the snapshots, newest first, optionally only
// those of one sandbox or matching one name or id.
func (r *Room) ListSnapshots(ctx context.Context, sandboxID, name string) ([]*store.Snapshot, error) {
	all, err := r.opts.Store.ListSnapshots(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	return sandbox.FilterSnapshots(all, sandboxID, name), nil
}

// DeleteSnapshot forgets a snapshot and frees what no sandbox uses of
// it: its memory image at once, its disk layer once no sandbox stands on
// it.
func (r *Room) DeleteSnapshot(ctx context.Context, idOrName string) error {
	snap, err := r.opts.Store.GetSnapshot(ctx, idOrName)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.opts.Store.DeleteSnapshot(ctx, snap.ID); err != nil {
		return err
	}
	r.collectLocked(ctx)
	return nil
}
