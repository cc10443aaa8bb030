package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
)

// Parker is the room that keeps paused sandboxes on the cluster's shared
// storage, from which another node takes them over when this one dies
// (internal/park). The manager asks it at the few points where a parked
// state matters; without one (no --shared-dir) nothing is parked.
type Parker interface {
	// Paused: sandbox id was just paused or checkpointed. The caller
	// holds the sandbox: the park runs later.
	Paused(id string)
	// Unparked: sandbox id's parked state is not needed any more
	// (resumed, or killed).
	Unparked(id string)
	// TakeOver brings sandbox id, which the manager does not hold, from
	// its parked state if the cluster handed it here; ErrNotFound if not.
	TakeOver(ctx context.Context, id string) error
	// KillHanded kills sandbox id, handed here parked and not taken
	// over, without rebuilding it; false when it is not such a sandbox.
	KillHanded(ctx context.Context, id, reason string) (bool, error)
	// ParkedHere says whether record sb is a paused sandbox this node
	// can take over from its parked state.
	ParkedHere(sb *store.Sandbox) bool
}

// SetParker registers the parking room; before Reconcile, which leaves
// a parked sandbox without an instance for it to take over.
func (m *Manager) SetParker(p Parker) { m.parker = p }

// getOrTakeOver is get, which, for a sandbox this node does not hold
// but the cluster handed to it parked, takes the sandbox over first.
func (m *Manager) getOrTakeOver(ctx context.Context, id string) (*entry, error) {
	e, err := m.get(id)
	if err == nil || m.parker == nil {
		return e, err
	}
	if terr := m.parker.TakeOver(ctx, id); terr != nil {
		if errdefs.IsNotFound(terr) {
			return nil, err
		}
		return nil, terr
	}
	return m.get(id)
}

// Holds says whether the manager holds sandbox id.
func (m *Manager) Holds(id string) bool {
	_, err := m.get(id)
	return err == nil
}

// WithSandbox runs fn holding live sandbox id's lock (without wait, not
// at all when another operation holds it): for the rooms that act on a
// sandbox between lifecycle operations (a park). fn may change the
// record and then stores it itself. It reports whether id is live.
func (m *Manager) WithSandbox(id string, wait bool, fn func(sb *store.Sandbox, b runtime.Backend, killed bool)) bool {
	e, err := m.get(id)
	if err != nil {
		return false
	}
	if wait {
		e.mu.Lock()
	} else if !e.mu.TryLock() {
		return true
	}
	defer e.mu.Unlock()
	fn(e.sb, e.backend, e.killed)
	return true
}

// Go runs fn in the manager's background (under its base context, which
// Shutdown cancels and waits for); nothing runs after Shutdown.
func (m *Manager) Go(fn func(ctx context.Context)) { m.goBackground(fn) }

// StandParked rebuilds sandbox sb, handed here parked, and adopts it
// paused, as it was: its own layers, unpacked into the directories
// staged (top first, the top one holding its memory image when memory),
// move into the snapshot dir, over its template's layers as the parking
// node recorded them (mapped to this node's). The instance is created
// stopped; sb is recorded here with its new address.
func (m *Manager) StandParked(ctx context.Context, sb *store.Sandbox, backend runtime.Backend, templateLayers, staged []string, memory bool) error {
	if m.Holds(sb.ID) {
		return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("sandbox %q is already here", sb.ID))
	}
	inst, err := m.rebuild(ctx, sb, backend, templateLayers, staged, memory)
	if err != nil {
		return err
	}
	sb.IP, sb.Intent = inst.IP.String(), ""
	if err := m.opts.Store.UpdateSandbox(ctx, sb); err != nil {
		m.destroy(context.WithoutCancel(ctx), backend, sb.ID)
		m.collectLater()
		return fmt.Errorf("recording parked sandbox %s here: %w", sb.ID, err)
	}
	m.adopt(ctx, &entry{sb: sb, ip: inst.IP, backend: backend, conns: newConnSet()}, inst)
	return nil
}

// rebuild creates sb's instance, stopped, from its staged layers over
// its template's, which this node has or pulls by key.
func (m *Manager) rebuild(ctx context.Context, sb *store.Sandbox, backend runtime.Backend, templateLayers, staged []string, memory bool) (*runtime.Instance, error) {
	if m.opts.SnapshotDir == "" || len(staged) == 0 {
		return nil, errdefs.New(errdefs.ErrNotImplemented, "this node keeps no snapshots, so it cannot take over parked sandboxes")
	}
	base, err := m.localTemplate(ctx, &store.Template{ID: sb.TemplateID, Layers: templateLayers})
	if err != nil {
		return nil, err
	}
	tpl, err := m.opts.Store.GetTemplate(ctx, sb.TemplateID)
	if err != nil {
		// Deleted since: its layers are named above, and envd's start
		// command is the one thing a cold boot misses.
		tpl = &store.Template{ID: sb.TemplateID}
	}
	defer m.holdSnapshots()() // until the instance stands on the layers
	own, err := m.intoSnapshotDir(staged)
	if err != nil {
		return nil, err
	}
	spec := m.spec(sb, tpl)
	m.guardArgs(&spec, backend)
	// Where the volumes are on this node, at the paths the image expects.
	if spec.Mounts, err = m.hostMounts(ctx, sb.VolumeMounts); err != nil {
		removeLayers(own)
		return nil, err
	}
	layers := append(own, base.Layers...)
	spec.Rootfs = layers[len(layers)-1]
	// The memory image was staged beside the top layer.
	spec.From = &runtime.Snapshot{Dir: filepath.Dir(own[0]), Layers: layers, Memory: memory}
	spec.Stopped = true
	inst, err := backend.Create(ctx, spec)
	if err != nil {
		removeLayers(own)
		return nil, fmt.Errorf("rebuilding parked sandbox %s: %w", sb.ID, err)
	}
	return inst, nil
}

// intoSnapshotDir moves staged snapshot directories into the snapshot
// dir and returns their layers. The caller holds the collector off.
func (m *Manager) intoSnapshotDir(staged []string) ([]string, error) {
	if err := os.MkdirAll(m.opts.SnapshotDir, 0o700); err != nil {
		return nil, err
	}
	var layers []string
	for _, s := range staged {
		dst := filepath.Join(m.opts.SnapshotDir, "snap"+newID()[:16])
		if err := os.Rename(s, dst); err != nil {
			removeLayers(layers)
			return nil, fmt.Errorf("moving an unpacked layer into the snapshot dir: %w", err)
		}
		layers = append(layers, filepath.Join(dst, "layer"))
	}
	return layers, nil
}

// removeLayers removes the snapshot directories of layers.
func removeLayers(layers []string) {
	for _, l := range layers {
		_ = os.RemoveAll(filepath.Dir(l))
	}
}

// paused tells the parker that e was paused. The caller holds e.mu.
func (m *Manager) paused(e *entry) {
	if m.parker != nil {
		m.parker.Paused(e.sb.ID)
	}
}

// unparked tells the parker that sandbox id's parked state can go.
func (m *Manager) unparked(id string) {
	if m.parker != nil {
		m.parker.Unparked(id)
	}
}
