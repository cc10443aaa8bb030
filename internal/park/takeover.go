package park

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
// at once (TakeOver). It returns how many it took over.
func (r *Room) TakeOverParked(ctx context.Context) (int, error) {
	if r.opts.NodeName == "" {
		return 0, nil
	}
	records, err := r.opts.Store.ListSandboxesOnNode(ctx, r.opts.NodeName)
	if err != nil {
		return 0, fmt.Errorf("listing this node's sandboxes: %w", err)
	}
	taken := 0
	for _, sb := range records {
		if !sb.Parked || sb.State != store.SandboxPaused || !r.dueForRetry(sb.ID) || r.m.Holds(sb.ID) {
			continue
		}
		if err := r.TakeOver(ctx, sb.ID); err != nil {
			log.G(ctx).Warn("taking over a parked sandbox", "sandbox", sb.ID, "err", err)
			continue
		}
		taken++
	}
	if r.sweepDue() {
		r.parkUnparked(records)
		r.collectParked(ctx)
	}
	return taken, nil
}

// handedHere reads sandbox id's record: a parked, paused sandbox of
// this node that is not being killed, or ErrNotFound.
func (r *Room) handedHere(ctx context.Context, id string) (*store.Sandbox, error) {
	sb, err := r.opts.Store.GetSandbox(ctx, id)
	if err != nil {
		return nil, err
	}
	if sb.Node != r.opts.NodeName || !r.ParkedHere(sb) {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
	}
	return sb, nil
}

// lockTaking makes the caller the only one taking over (or killing
// before a take-over) sandbox id until it calls the returned func.
func (r *Room) lockTaking(ctx context.Context, id string) (func(), error) {
	for {
		r.mu.Lock()
		busy, ok := r.taking[id]
		if !ok {
			done := make(chan struct{})
			r.taking[id] = done
			r.mu.Unlock()
			return func() {
				r.mu.Lock()
				delete(r.taking, id)
				r.mu.Unlock()
				close(done)
			}, nil
		}
		r.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TakeOver rebuilds sandbox id, parked by another node and handed to
// this one, from its parked directory: created stopped, with its memory
// image when it has one, and adopted paused as it was. The directory and
// the Parked flag stay until the sandbox is resumed, so should this node
// die too, the next one can take it over again. ErrNotFound when the
// record is not a parked sandbox of this node's.
func (r *Room) TakeOver(ctx context.Context, id string) (retErr error) {
	if _, err := r.handedHere(ctx, id); err != nil {
		return err // the common case, a miss: no lock taken
	}
	if err := r.failedForGood(id); err != nil {
		return err
	}
	release, err := r.lockTaking(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), takeOverTimeout)
	defer cancel()
	if r.m.Holds(id) {
		return nil
	}
	sb, err := r.handedHere(ctx, id)
	if err != nil {
		return err
	}
	defer func() { r.noteAttempt(id, retErr) }()
	backend, ok := r.m.Backend(sb.Backend)
	if !ok {
		return errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("sandbox %q was parked on runtime %s, which node %s does not run", id, sb.Backend, r.opts.NodeName))
	}
	start := time.Now()
	dir := r.path(id)
	man, err := readManifest(dir, id)
	if err != nil {
		return err
	}
	staged, err := r.unpack(ctx, dir, man)
	defer removeAll(staged) // what did not move into the snapshot dir
	if err != nil {
		return err
	}
	if err := r.m.StandParked(ctx, sb, backend, man.TemplateLayers, staged, man.Memory); err != nil {
		return err
	}
	log.G(ctx).Info("took over a sandbox parked by another node", "sandbox", id, "parked_by", man.Node,
		"memory", man.Memory, "took", time.Since(start))
	return nil
}

// staging is where parked layers are unpacked, beside the snapshot dir
// (same filesystem: they move in by rename) but outside it, so the
// snapshot collector is not held off while they unpack.
func (r *Room) staging() string {
	return filepath.Join(filepath.Dir(r.opts.SnapshotDir), "takeover")
}

// unpack extracts the parked layer tars into new staging directories and
// returns them, top first (also on error: what was made, for the caller
// to remove). The tars are the sandbox's files: extracted with every
// check hostile archives get.
func (r *Room) unpack(ctx context.Context, dir string, man *manifest) ([]string, error) {
	if r.opts.SnapshotDir == "" {
		return nil, errdefs.New(errdefs.ErrNotImplemented, "this node keeps no snapshots, so it cannot take over parked sandboxes")
	}
	var out []string
	for i := range man.Layers {
		name := runtime.ExportLayer
		if i > 0 {
			name = fmt.Sprintf("layer-%d.tar", i)
		}
		l := filepath.Join(r.staging(), "snap"+suffix()+suffix())
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

// removeAll removes the staged directories that paths name.
func removeAll(paths []string) {
	for _, p := range paths {
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

// KillHanded kills sandbox id, handed to this node parked but not taken
// over yet, without rebuilding it: its record, parked state and a killed
// event go. It reports false when id is not such a sandbox (any more: it
// may have been taken over meanwhile), for the manager to kill as any.
func (r *Room) KillHanded(ctx context.Context, id, reason string) (bool, error) {
	release, err := r.lockTaking(ctx, id)
	if err != nil {
		return false, err
	}
	defer release()
	if r.m.Holds(id) {
		return false, nil // taken over meanwhile: killed as any other
	}
	sb, err := r.handedHere(ctx, id)
	if errdefs.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	ctx = context.WithoutCancel(ctx)
	sb.Intent, sb.Parked = store.IntentKilling, false
	if err := r.opts.Store.UpdateSandbox(ctx, sb); err != nil {
		if errdefs.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("killing sandbox: %w", err)
	}
	if err := r.opts.Store.DeleteSandbox(ctx, id); err != nil && !errdefs.IsNotFound(err) {
		return false, fmt.Errorf("forgetting sandbox: %w", err)
	}
	r.Unparked(id)
	r.emitKilled(ctx, sb, reason)
	log.G(ctx).Info("sandbox killed", "sandbox", id, "parked", true)
	return true, nil
}

// emitKilled records sb's killed event, as the manager does for the
// sandboxes it holds.
func (r *Room) emitKilled(ctx context.Context, sb *store.Sandbox, reason string) {
	if r.opts.Events == nil {
		return
	}
	data, _ := json.Marshal(map[string]any{"reason": reason})
	r.opts.Events.Record(ctx, &store.Event{Type: store.EventKilled, SandboxID: sb.ID, TemplateID: sb.TemplateID,
		TeamID: store.TeamOf(sb.TeamID), Data: data})
}
