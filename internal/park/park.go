// Package park is the room that keeps paused sandboxes on the cluster's
// shared storage (--shared-dir) so that another node can take them over
// when theirs dies. It uses the sandbox manager through Machine, which it
// declares, and the manager asks it at the few points where a parked
// state matters (lifecycle.Parker): a pause, a resume or kill, a request
// for a sandbox the node does not hold.
package park

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/durable"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// Parking: a paused sandbox's state is also written to the shared
// storage, in <SharedDir>/parked/<id>:
//
//	manifest.json  what the directory holds (manifest)
//	layer.tar      the sandbox's writable layer (runtime.ExportLayer)
//	layer-N.tar    the node-local snapshot layers it stands on, top first
//	memory/        its memory image, when it was checkpointed
//
// The template's layers are not copied: every node has them or pulls
// them by key. The record's Parked flag says the directory is whole and
// current; only a sandbox that stays paused keeps it (a resume clears the
// flag, then removes the directory). When the sandbox's node dies, the
// API role hands the record to a live node with the same shared storage
// (store.MoveSandbox), which rebuilds the sandbox from the directory
// (takeover.go) and resumes it when asked.
//
// A runc sandbox paused with its memory is frozen in the host's memory,
// which cannot move: what is parked is its disk, and a resume elsewhere
// boots it afresh. A frozen runsc sandbox is parked once it is
// checkpointed (--checkpoint-after): until then its own kernel may hold
// writes the host's disk does not have.
const (
	parkedDir      = "parked"
	parkManifest   = "manifest.json"
	parkPartSuffix = ".part" // being written
	parkGoneSuffix = ".gone" // being removed
)

// Machine is what the room needs of the sandbox manager
// (*lifecycle.Manager).
type Machine interface {
	// Holds says whether the manager holds sandbox id.
	Holds(id string) bool
	// WithSandbox runs fn holding live sandbox id's lock (without wait,
	// not at all when the sandbox is busy); fn may change the record,
	// and stores it itself. It reports whether the sandbox is live.
	WithSandbox(id string, wait bool, fn func(sb *store.Sandbox, b runtime.Backend, killed bool)) bool
	// Backend is the backend of this name, if the node runs it.
	Backend(name string) (runtime.Backend, bool)
	// StandParked rebuilds sb, handed here parked, from its layers
	// unpacked into staged (top first) over its template's layers as
	// the parking node recorded them, and adopts it paused.
	StandParked(ctx context.Context, sb *store.Sandbox, b runtime.Backend, templateLayers, staged []string, memory bool) error
	// Go runs fn in the manager's background, which its Shutdown waits for.
	Go(fn func(ctx context.Context))
}

// Options configure the room.
type Options struct {
	Store store.Store
	// SharedDir is the storage every node mounts at this path.
	SharedDir string
	// SnapshotDir is the manager's snapshot dir: the layers a sandbox
	// stands on there are this node's only, so they are parked too, and
	// taken-over layers move into it. "" takes nothing over.
	SnapshotDir string
	// NodeName is this node's name (store.Sandbox.Node).
	NodeName string
	// Events records the killed event of a sandbox killed while handed
	// here parked; nil records none.
	Events sandbox.EventRecorder
}

// Room parks this node's paused sandboxes and takes over those the
// cluster hands to it.
type Room struct {
	m    Machine
	opts Options

	mu sync.Mutex
	// taking holds a channel per sandbox being taken over (or killed
	// before it was), closed when that ends: one at a time per id.
	taking map[string]chan struct{}
	// retryAt: a sandbox whose take-over (or park) failed is not tried
	// again by the sweep before then. A request tries at once unless the
	// failure was for good (failedFor).
	retryAt map[string]time.Time
	// failedFor holds the take-over errors that trying again cannot
	// cure (a parked state that is damaged, a runtime this node lacks),
	// answered to requests until retryAt without rebuilding anything.
	failedFor map[string]error
	// swept is when the sweep last collected and re-parked.
	swept time.Time
}

// New returns the room; register it with the manager (SetParker) before
// Reconcile. It removes the layers a take-over was unpacking when an
// earlier process died.
func New(m Machine, opts Options) *Room {
	r := &Room{m: m, opts: opts, taking: map[string]chan struct{}{},
		retryAt: map[string]time.Time{}, failedFor: map[string]error{}}
	if opts.SnapshotDir != "" {
		_ = os.RemoveAll(r.staging())
	}
	return r
}

// manifest describes a parked directory.
type manifest struct {
	ID     string    `json:"id"`
	Node   string    `json:"node"` // the node that parked it
	At     time.Time `json:"at"`
	Memory bool      `json:"memory"`
	// Layers is the number of layer tars, layer.tar being the top.
	Layers int `json:"layers"`
	// TemplateLayers are the template's layers below them, top first,
	// as recorded on the parking node (mapped by key on the taking one).
	TemplateLayers []string `json:"templateLayers"`
}

// path is where sandbox id is parked.
func (r *Room) path(id string) string {
	return filepath.Join(r.opts.SharedDir, parkedDir, id)
}

// ParkedHere says whether sb is a parked, paused sandbox that this node
// can take over from shared storage.
func (r *Room) ParkedHere(sb *store.Sandbox) bool {
	return sb.Parked && sb.State == store.SandboxPaused && sb.Intent != store.IntentKilling
}

// Paused parks sandbox id, just paused or checkpointed, in the
// background: a pause returns without waiting for its state to reach
// shared storage (and the caller holds the sandbox).
func (r *Room) Paused(id string) {
	r.m.Go(func(ctx context.Context) { r.park(ctx, id, true) })
}

// park parks sandbox id if it is paused and not parked (or its parked
// copy is worth replacing). Without wait it gives up at once when the
// sandbox is busy: the sweep tries again later.
func (r *Room) park(ctx context.Context, id string, wait bool) {
	ctx = log.With(ctx, "sandbox", id)
	r.m.WithSandbox(id, wait, func(sb *store.Sandbox, b runtime.Backend, killed bool) {
		if killed || sb.State != store.SandboxPaused || (sb.Parked && !r.reparkable(ctx, sb, b)) {
			return
		}
		start := time.Now()
		parked, err := r.parkLocked(ctx, sb, b)
		r.noteAttempt(id, err)
		if err != nil {
			log.G(ctx).Warn("parking a paused sandbox on shared storage; it stays on this node only until a later try", "err", err)
			return
		}
		if parked {
			log.G(ctx).Info("paused sandbox parked on shared storage", "took", time.Since(start))
		}
	})
}

// parkLocked writes sb's state to its parked directory and records it
// parked. It reports false when sb cannot be parked yet (a frozen runsc
// sandbox). The caller holds the sandbox.
func (r *Room) parkLocked(ctx context.Context, sb *store.Sandbox, b runtime.Backend) (bool, error) {
	id := sb.ID
	inst, err := b.Inspect(ctx, id)
	if err != nil {
		return false, err
	}
	if inst.State == runtime.StatePaused && b.Capabilities().Checkpoint {
		return false, nil
	}
	if overlay.Check(len(inst.Layers)+1) != nil {
		return false, nil // a stack no node could rebuild (its top becomes a layer too)
	}
	root := filepath.Join(r.opts.SharedDir, parkedDir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return false, fmt.Errorf("creating %s: %w", root, err)
	}
	tmp := filepath.Join(root, "."+id+"-"+suffix()+parkPartSuffix)
	if err := r.write(ctx, sb, b, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return false, err
	}
	if err := r.stillOurs(ctx, id); err != nil {
		_ = os.RemoveAll(tmp)
		return false, err
	}
	if err := replaceDir(tmp, r.path(id)); err != nil {
		_ = os.RemoveAll(tmp)
		return false, err
	}
	if !sb.Parked {
		sb.Parked = true
		if err := r.opts.Store.UpdateSandbox(ctx, sb); err != nil {
			sb.Parked = false
			return false, fmt.Errorf("recording the sandbox parked: %w", err)
		}
	}
	return true, nil
}

// write fills the new directory dir with sb's state.
func (r *Room) write(ctx context.Context, sb *store.Sandbox, b runtime.Backend, dir string) error {
	exp, err := b.Export(ctx, sb.ID, dir)
	if err != nil {
		return fmt.Errorf("exporting the sandbox: %w", err)
	}
	man := manifest{ID: sb.ID, Node: r.opts.NodeName, At: time.Now().UTC(), Memory: exp.Memory, Layers: 1}
	for _, l := range exp.Layers {
		if !r.inSnapshotDir(l) {
			man.TemplateLayers = append(man.TemplateLayers, l)
			continue
		}
		if len(man.TemplateLayers) > 0 {
			return fmt.Errorf("snapshot layer %s lies below the template's layers", l)
		}
		name := fmt.Sprintf("layer-%d.tar", man.Layers)
		if err := durable.WriteFile(filepath.Join(dir, name), func(w io.Writer) error { return layer.Archive(ctx, w, l) }); err != nil {
			return fmt.Errorf("archiving snapshot layer %s: %w", l, err)
		}
		man.Layers++
	}
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(filepath.Join(dir, parkManifest), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// inSnapshotDir says whether layer path l is one of this node's snapshot
// layers, which no other node has.
func (r *Room) inSnapshotDir(l string) bool {
	if r.opts.SnapshotDir == "" {
		return false
	}
	rel, err := filepath.Rel(r.opts.SnapshotDir, l)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// replaceDir renames the whole directory tmp to dst, replacing an older
// dst: a reader sees the old directory or the new one, never a mix, and
// (where the filesystem can exchange two names at once) never neither.
func replaceDir(tmp, dst string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dst, unix.RENAME_EXCHANGE)
	if err == nil {
		_ = os.RemoveAll(tmp) // the old one, now
		return nil
	}
	old := ""
	if _, err := os.Stat(dst); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dst, old); err != nil {
			return fmt.Errorf("setting the old parked state aside: %w", err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		if old != "" {
			_ = os.Rename(old, dst) // the old state is better than none
		}
		return fmt.Errorf("publishing the parked state: %w", err)
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	return nil
}

// Unparked removes sandbox id's parked directory, if any (it was resumed
// or killed): renamed aside at once (so a park that follows is not
// removed with it), deleted in the background (large, and maybe on a slow
// network filesystem).
func (r *Room) Unparked(id string) {
	gone := filepath.Join(r.opts.SharedDir, parkedDir, "."+id+"-"+suffix()+parkGoneSuffix)
	if err := os.Rename(r.path(id), gone); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			log.G(context.Background()).Warn("removing a parked sandbox's state", "sandbox", id, "err", err)
		}
		return
	}
	r.m.Go(func(context.Context) { _ = os.RemoveAll(gone) })
}

// reparkable says whether parked sandbox sb's parked copy is worth
// writing again: it is missing or damaged, or it lacks the memory image
// sb now has on disk (a runsc sandbox checkpointed after its first park).
// The caller holds the sandbox.
func (r *Room) reparkable(ctx context.Context, sb *store.Sandbox, b runtime.Backend) bool {
	man, err := readManifest(r.path(sb.ID), sb.ID)
	if err != nil {
		return true
	}
	if man.Memory {
		return false
	}
	inst, err := b.Inspect(ctx, sb.ID)
	return err == nil && inst.Checkpointed
}

// stillOurs checks, just before a parked copy is published, that the
// record is still this node's: a node taken for dead while it exported
// must not publish over the state of the node now holding the sandbox.
func (r *Room) stillOurs(ctx context.Context, id string) error {
	if r.opts.NodeName == "" {
		return nil
	}
	sb, err := r.opts.Store.GetSandbox(ctx, id)
	if err != nil {
		return err
	}
	if sb.Node != r.opts.NodeName {
		return fmt.Errorf("sandbox %s is on node %s now", id, sb.Node)
	}
	return nil
}

// suffix makes the names of directories being written or removed unique.
func suffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
