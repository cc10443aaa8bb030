package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/durable"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// parkState is what parking and taking over keep between calls.
type parkState struct {
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

// Timings of the sweep.
const (
	retryAfter = time.Minute // after a failed take-over or park
	sweepEvery = time.Minute // collecting parked dirs, parking again
	// takeOverTimeout bounds one take-over, whoever asked for it: it
	// does not end with the request that started it.
	takeOverTimeout = 30 * time.Minute
)

// TakeOverParked takes over the parked sandboxes the cluster handed to
// this node (store.MoveSandbox) that it does not hold yet and, every
// sweepEvery, parks what is paused but not parked and removes parked
// directories nobody needs. The heartbeat calls it after every beat, off
// the beat's own goroutine; a request for such a sandbox takes it over
// at once (getOrTakeOver). It returns how many it took over.
func (m *Manager) TakeOverParked(ctx context.Context) (int, error) {
	if m.opts.SharedDir == "" || m.opts.NodeName == "" {
		return 0, nil
	}
	records, err := m.opts.Store.ListSandboxesOnNode(ctx, m.opts.NodeName)
	if err != nil {
		return 0, fmt.Errorf("listing this node's sandboxes: %w", err)
	}
	taken := 0
	for _, sb := range records {
		if !sb.Parked || sb.State != store.SandboxPaused || !m.dueForRetry(sb.ID) {
			continue
		}
		if _, err := m.get(sb.ID); err == nil {
			continue
		}
		if err := m.takeOver(ctx, sb.ID); err != nil {
			log.G(ctx).Warn("taking over a parked sandbox", "sandbox", sb.ID, "err", err)
			continue
		}
		taken++
	}
	if m.sweepDue() {
		m.parkUnparked()
		m.collectParked(ctx)
	}
	return taken, nil
}

// getOrTakeOver is get, which, for a sandbox this node does not hold
// but the cluster handed to it, takes the sandbox over first.
func (m *Manager) getOrTakeOver(ctx context.Context, id string) (*entry, error) {
	e, err := m.get(id)
	if err == nil || m.opts.SharedDir == "" {
		return e, err
	}
	if terr := m.takeOver(ctx, id); terr != nil {
		if errdefs.IsNotFound(terr) {
			return nil, err
		}
		return nil, terr
	}
	return m.get(id)
}

// handedHere reads sandbox id's record: a parked, paused sandbox of
// this node that is not being killed, or ErrNotFound.
func (m *Manager) handedHere(ctx context.Context, id string) (*store.Sandbox, error) {
	sb, err := m.opts.Store.GetSandbox(ctx, id)
	if err != nil {
		return nil, err
	}
	if sb.Node != m.opts.NodeName || !m.parkedHere(sb) {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
	}
	return sb, nil
}

// lockTaking makes the caller the only one taking over (or killing
// before a take-over) sandbox id until it calls the returned func.
func (m *Manager) lockTaking(ctx context.Context, id string) (func(), error) {
	for {
		m.mu.Lock()
		busy, ok := m.parking.taking[id]
		if !ok {
			done := make(chan struct{})
			m.parking.taking[id] = done
			m.mu.Unlock()
			return func() {
				m.mu.Lock()
				delete(m.parking.taking, id)
				m.mu.Unlock()
				close(done)
			}, nil
		}
		m.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// takeOver rebuilds sandbox id, parked by another node and handed to
// this one, from its parked directory: created stopped, with its memory
// image when it has one, and adopted paused as it was. The directory and
// the Parked flag stay until the sandbox is resumed, so should this node
// die too, the next one can take it over again. ErrNotFound when the
// record is not a parked sandbox of this node's.
func (m *Manager) takeOver(ctx context.Context, id string) (retErr error) {
	if _, err := m.handedHere(ctx, id); err != nil {
		return err // the common case, a miss: no lock taken
	}
	if err := m.failedForGood(id); err != nil {
		return err
	}
	release, err := m.lockTaking(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), takeOverTimeout)
	defer cancel()
	if _, err := m.get(id); err == nil {
		return nil
	}
	sb, err := m.handedHere(ctx, id)
	if err != nil {
		return err
	}
	defer func() { m.noteAttempt(id, retErr) }()
	backend, ok := m.opts.Backends[sb.Backend]
	if !ok {
		return errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("sandbox %q was parked on runtime %s, which node %s does not run", id, sb.Backend, m.opts.NodeName))
	}
	start := time.Now()
	dir := m.parkedPath(id)
	man, err := readManifest(dir, id)
	if err != nil {
		return err
	}
	inst, err := m.rebuild(ctx, sb, man, dir, backend)
	if err != nil {
		return err
	}
	sb.IP, sb.Intent = inst.IP.String(), ""
	if err := m.opts.Store.UpdateSandbox(ctx, sb); err != nil {
		m.destroy(context.WithoutCancel(ctx), backend, id)
		m.collectLater()
		return fmt.Errorf("recording parked sandbox %s here: %w", id, err)
	}
	m.adopt(ctx, &entry{sb: sb, ip: inst.IP, backend: backend, conns: newConnSet()}, inst)
	log.G(ctx).Info("took over a sandbox parked by another node", "sandbox", id, "parked_by", man.Node,
		"memory", man.Memory, "took", time.Since(start))
	return nil
}

// rebuild creates sb's instance, stopped, from its parked directory dir:
// its own layers unpacked into this node's snapshot dir, over the
// template's layers, which this node has or pulls by key.
func (m *Manager) rebuild(ctx context.Context, sb *store.Sandbox, man *manifest, dir string, backend runtime.Backend) (*runtime.Instance, error) {
	base, err := m.localTemplate(ctx, &store.Template{ID: sb.TemplateID, Layers: man.TemplateLayers})
	if err != nil {
		return nil, err
	}
	tpl, err := m.opts.Store.GetTemplate(ctx, sb.TemplateID)
	if err != nil {
		// Deleted since: its layers are named above, and envd's start
		// command is the one thing a cold boot misses.
		tpl = &store.Template{ID: sb.TemplateID}
	}
	staged, err := m.unpackParked(ctx, dir, man)
	defer removeAll(staged) // what did not move into the snapshot dir
	if err != nil {
		return nil, err
	}
	m.snapMu.RLock() // until the instance stands on the layers
	defer m.snapMu.RUnlock()
	own, err := m.intoSnapshotDir(staged)
	if err != nil {
		return nil, err
	}
	spec := m.spec(sb, tpl)
	m.guardArgs(&spec, backend)
	layers := append(own, base.Layers...)
	spec.Rootfs = layers[len(layers)-1]
	// The memory image was staged beside the top layer (parkMemory).
	spec.From = &runtime.Snapshot{Dir: filepath.Dir(own[0]), Layers: layers, Memory: man.Memory}
	spec.Stopped = true
	inst, err := backend.Create(ctx, spec)
	if err != nil {
		removeAll(own)
		return nil, fmt.Errorf("rebuilding parked sandbox %s: %w", sb.ID, err)
	}
	return inst, nil
}

// takeoverStaging is where parked layers are unpacked, beside the
// snapshot dir (same filesystem: they move in by rename) but outside it,
// so the snapshot collector is not held off while they unpack.
func (m *Manager) takeoverStaging() string {
	return filepath.Join(filepath.Dir(m.opts.SnapshotDir), "takeover")
}

// unpackParked extracts the parked layer tars into new staging
// directories and returns them, top first (also on error: what was
// made, for the caller to remove). The tars are the sandbox's files:
// extracted with every check hostile archives get.
func (m *Manager) unpackParked(ctx context.Context, dir string, man *manifest) ([]string, error) {
	if m.opts.SnapshotDir == "" {
		return nil, errdefs.New(errdefs.ErrNotImplemented, "this node keeps no snapshots, so it cannot take over parked sandboxes")
	}
	var out []string
	for i := range man.Layers {
		name := runtime.ExportLayer
		if i > 0 {
			name = fmt.Sprintf("layer-%d.tar", i)
		}
		l := filepath.Join(m.takeoverStaging(), "snap"+newID()[:16])
		out = append(out, l)
		if err := os.MkdirAll(filepath.Join(l, "layer"), 0o700); err != nil {
			return out, err
		}
		if err := extractFile(ctx, filepath.Join(dir, name), filepath.Join(l, "layer")); err != nil {
			return out, errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("the parked layer %s of sandbox %s cannot be unpacked (%v); it cannot be resumed, only killed", name, man.ID, err))
		}
	}
	if man.Memory {
		// Copied here, outside any lock, so that the runtime only links it
		// (synced: the instance's image is this copy once linked).
		if err := durable.CopyDir(filepath.Join(dir, runtime.ExportMemory), filepath.Join(out[0], runtime.ExportMemory)); err != nil {
			return out, errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("the parked memory image of sandbox %s cannot be read (%v); it cannot be resumed, only killed", man.ID, err))
		}
	}
	return out, nil
}

// intoSnapshotDir moves staged snapshot directories into the snapshot
// dir and returns their layers. The caller holds snapMu for reading.
func (m *Manager) intoSnapshotDir(staged []string) ([]string, error) {
	if err := os.MkdirAll(m.opts.SnapshotDir, 0o700); err != nil {
		return nil, err
	}
	var layers []string
	for _, s := range staged {
		dst := filepath.Join(m.opts.SnapshotDir, filepath.Base(s))
		if err := os.Rename(s, dst); err != nil {
			removeAll(layers)
			return nil, fmt.Errorf("moving an unpacked layer into the snapshot dir: %w", err)
		}
		layers = append(layers, filepath.Join(dst, "layer"))
	}
	return layers, nil
}

// removeAll removes what paths name: staged directories, or the
// snapshot directories of layers.
func removeAll(paths []string) {
	for _, p := range paths {
		if filepath.Base(p) == "layer" {
			p = filepath.Dir(p)
		}
		_ = os.RemoveAll(p)
	}
}

func extractFile(ctx context.Context, tarPath, dst string) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	return layer.Extract(ctx, f, dst, layer.Options{Whiteouts: true, MaxEntries: layer.ImageMaxEntries})
}

// readManifest reads and checks the manifest of sandbox id's parked
// directory dir.
func readManifest(dir, id string) (*manifest, error) {
	damaged := func(why string) error {
		return errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("the parked state of sandbox %s is missing or damaged (%s); it cannot be resumed, only killed", id, why))
	}
	data, err := os.ReadFile(filepath.Join(dir, parkManifest))
	if err != nil {
		return nil, damaged(err.Error())
	}
	var man manifest
	if err := json.Unmarshal(data, &man); err != nil {
		return nil, damaged(err.Error())
	}
	if man.ID != id || man.Layers < 1 || man.Layers+len(man.TemplateLayers) > overlay.MaxLayers {
		return nil, damaged(fmt.Sprintf("it names sandbox %q with %d layers over %d", man.ID, man.Layers, len(man.TemplateLayers)))
	}
	return &man, nil
}

// killHanded kills sandbox id, handed to this node parked but not taken
// over yet, without rebuilding it: its record, parked state and a killed
// event go. ErrNotFound when it is not such a sandbox (any more).
func (m *Manager) killHanded(ctx context.Context, id, reason string) error {
	notFound := errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
	release, err := m.lockTaking(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	if _, err := m.get(id); err == nil {
		return errAgain // taken over meanwhile: kill it as any other
	}
	sb, err := m.handedHere(ctx, id)
	if errdefs.IsNotFound(err) {
		return notFound
	} else if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	sb.Intent, sb.Parked = store.IntentKilling, false
	if err := m.opts.Store.UpdateSandbox(ctx, sb); err != nil {
		if errdefs.IsNotFound(err) {
			return notFound
		}
		return fmt.Errorf("killing sandbox: %w", err)
	}
	if err := m.opts.Store.DeleteSandbox(ctx, id); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("forgetting sandbox: %w", err)
	}
	m.removeParked(id)
	m.emit(ctx, sb, execution{}, store.EventKilled, map[string]any{"reason": reason})
	log.G(ctx).Info("sandbox killed", "sandbox", id, "parked", true)
	return nil
}
