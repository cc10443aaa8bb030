package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/durable"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// Parking: with Options.SharedDir set, a paused sandbox's state is also
// written to the cluster's shared storage, in <SharedDir>/parked/<id>:
//
//	manifest.json  what the directory holds (parkManifest)
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

// parkedPath is where sandbox id is parked.
func (m *Manager) parkedPath(id string) string {
	return filepath.Join(m.opts.SharedDir, parkedDir, id)
}

// parkLater parks the paused sandbox e in the background: a pause
// returns without waiting for its state to reach shared storage.
func (m *Manager) parkLater(e *entry) {
	if m.opts.SharedDir == "" {
		return
	}
	id := e.sb.ID
	// It waits for the caller, which holds e.mu.
	m.goBackground(func(ctx context.Context) { m.park(ctx, id, true) })
}

// park parks sandbox id if it is paused and not parked (or its parked
// copy is worth replacing). Without wait it gives up at once when the
// sandbox is busy: the sweep tries again later.
func (m *Manager) park(ctx context.Context, id string, wait bool) {
	ctx = log.With(ctx, "sandbox", id)
	e, err := m.get(id)
	if err != nil {
		return
	}
	if !wait {
		if !e.mu.TryLock() {
			return
		}
	} else {
		e.mu.Lock()
	}
	defer e.mu.Unlock()
	if e.killed || e.sb.State != store.SandboxPaused || (e.sb.Parked && !m.reparkable(ctx, e)) {
		return
	}
	start := time.Now()
	parked, err := m.parkLocked(ctx, e)
	m.noteAttempt(id, err)
	if err != nil {
		log.G(ctx).Warn("parking a paused sandbox on shared storage; it stays on this node only until a later try", "err", err)
		return
	}
	if parked {
		log.G(ctx).Info("paused sandbox parked on shared storage", "took", time.Since(start))
	}
}

// parkLocked writes e's state to its parked directory and records it
// parked. It reports false when e cannot be parked yet (a frozen runsc
// sandbox). The caller holds e.mu.
func (m *Manager) parkLocked(ctx context.Context, e *entry) (bool, error) {
	id := e.sb.ID
	inst, err := e.backend.Inspect(ctx, id)
	if err != nil {
		return false, err
	}
	if inst.State == runtime.StatePaused && e.backend.Capabilities().Checkpoint {
		return false, nil
	}
	if overlay.Check(len(inst.Layers)+1) != nil {
		return false, nil // a stack no node could rebuild (its top becomes a layer too)
	}
	root := filepath.Join(m.opts.SharedDir, parkedDir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return false, fmt.Errorf("creating %s: %w", root, err)
	}
	tmp := filepath.Join(root, "."+id+"-"+newID()[:8]+parkPartSuffix)
	if err := m.writeParked(ctx, e, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return false, err
	}
	if err := m.stillOurs(ctx, id); err != nil {
		_ = os.RemoveAll(tmp)
		return false, err
	}
	if err := replaceDir(tmp, m.parkedPath(id)); err != nil {
		_ = os.RemoveAll(tmp)
		return false, err
	}
	if !e.sb.Parked {
		e.sb.Parked = true
		if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
			e.sb.Parked = false
			return false, fmt.Errorf("recording the sandbox parked: %w", err)
		}
	}
	return true, nil
}

// writeParked fills the new directory dir with e's state.
func (m *Manager) writeParked(ctx context.Context, e *entry, dir string) error {
	exp, err := e.backend.Export(ctx, e.sb.ID, dir)
	if err != nil {
		return fmt.Errorf("exporting the sandbox: %w", err)
	}
	man := manifest{ID: e.sb.ID, Node: m.opts.NodeName, At: time.Now().UTC(), Memory: exp.Memory, Layers: 1}
	for _, l := range exp.Layers {
		if !m.inSnapshotDir(l) {
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
func (m *Manager) inSnapshotDir(l string) bool {
	if m.opts.SnapshotDir == "" {
		return false
	}
	rel, err := filepath.Rel(m.opts.SnapshotDir, l)
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

// removeParked removes sandbox id's parked directory, if any: renamed
// aside at once (so a park that follows is not removed with it), deleted
// in the background (large, and maybe on a slow network filesystem).
func (m *Manager) removeParked(id string) {
	if m.opts.SharedDir == "" {
		return
	}
	gone := filepath.Join(m.opts.SharedDir, parkedDir, "."+id+"-"+newID()[:8]+parkGoneSuffix)
	if err := os.Rename(m.parkedPath(id), gone); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			log.G(m.bg.ctx).Warn("removing a parked sandbox's state", "sandbox", id, "err", err)
		}
		return
	}
	m.goBackground(func(context.Context) { _ = os.RemoveAll(gone) })
}

// reparkable says whether parked sandbox e's parked copy is worth
// writing again: it is missing or damaged, or it lacks the memory image
// e now has on disk (a runsc sandbox checkpointed after its first park).
// The caller holds e.mu.
func (m *Manager) reparkable(ctx context.Context, e *entry) bool {
	man, err := readManifest(m.parkedPath(e.sb.ID), e.sb.ID)
	if err != nil {
		return true
	}
	if man.Memory {
		return false
	}
	inst, err := e.backend.Inspect(ctx, e.sb.ID)
	return err == nil && inst.Checkpointed
}

// stillOurs checks, just before a parked copy is published, that the
// record is still this node's: a node taken for dead while it exported
// must not publish over the state of the node now holding the sandbox.
func (m *Manager) stillOurs(ctx context.Context, id string) error {
	if m.opts.NodeName == "" {
		return nil
	}
	sb, err := m.opts.Store.GetSandbox(ctx, id)
	if err != nil {
		return err
	}
	if sb.Node != m.opts.NodeName {
		return fmt.Errorf("sandbox %s is on node %s now", id, sb.Node)
	}
	return nil
}
