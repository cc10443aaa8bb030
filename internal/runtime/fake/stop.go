package fake

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// WithoutCheckpoint makes the fake behave like a backend that cannot save
// memory (runc): Stop with Checkpoint fails and snapshots hold disk only.
func (b *Backend) WithoutCheckpoint() *Backend {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noMemory = true
	return b
}

// Capabilities implements runtime.Backend.
func (b *Backend) Capabilities() runtime.Capabilities {
	b.mu.Lock()
	defer b.mu.Unlock()
	// With memory alerts it plays runsc: a kernel of its own as well.
	return runtime.Capabilities{Checkpoint: !b.noMemory, OwnKernel: b.memAlerts, MemoryAlerts: b.memAlerts}
}

// Stop implements runtime.Backend.
func (b *Backend) Stop(ctx context.Context, id string, opts runtime.StopOptions) error {
	if err := b.begin(ctx, OpStop, id); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	if opts.Checkpoint && b.noMemory {
		return fmt.Errorf("checkpointing sandbox %s: %w", id, errdefs.ErrNotImplemented)
	}
	if st.inst.State == runtime.StateStopped {
		return fmt.Errorf("stopping sandbox %s: it is stopped: %w", id, errdefs.ErrFailedPrecondition)
	}
	st.inst.State, st.inst.Pid, st.inst.Checkpointed = runtime.StateStopped, 0, opts.Checkpoint
	b.closeAlertsLocked(id)
	return nil
}

// Start implements runtime.Backend.
func (b *Backend) Start(ctx context.Context, id string, opts runtime.StartOptions) (*runtime.Instance, error) {
	if err := b.begin(ctx, OpStart, id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return nil, fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	if st.inst.State != runtime.StateStopped {
		return nil, fmt.Errorf("starting sandbox %s: it is %s: %w", id, st.inst.State, errdefs.ErrFailedPrecondition)
	}
	if opts.Mounts != nil {
		if err := remount(st, opts.Mounts); err != nil {
			return nil, fmt.Errorf("starting sandbox %s: %w", id, err)
		}
	}
	st.inst.State, st.inst.Pid, st.inst.Checkpointed = runtime.StateRunning, 1000+len(b.calls), false
	return copyInstance(&st.inst), nil
}

// Snapshot implements runtime.Backend: it creates dst with an empty layer
// directory in it, so callers can see what they must clean up.
func (b *Backend) Snapshot(ctx context.Context, id, dst string) (*runtime.Snapshot, error) {
	if err := b.begin(ctx, OpSnapshot, id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return nil, fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	if err := overlay.Check(len(st.inst.Layers) + 1); err != nil {
		return nil, errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("sandbox %s cannot take another snapshot: %v", id, err))
	}
	layer := filepath.Join(dst, "layer")
	if err := os.Mkdir(dst, 0o700); err != nil {
		return nil, fmt.Errorf("creating snapshot dir: %w", err)
	}
	if hook := b.hook; hook != nil {
		b.mu.Unlock()
		err := hook(ctx, OpSnapshotWrite, id)
		b.mu.Lock()
		if err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(layer, 0o700); err != nil {
		return nil, fmt.Errorf("writing snapshot layer: %w", err)
	}
	memory := !b.noMemory && (st.inst.State != runtime.StateStopped || st.inst.Checkpointed)
	layers := append([]string{layer}, st.inst.Layers...)
	if !b.noMemory || st.inst.State == runtime.StateStopped {
		// As the real backends: the layer moved out of the source, which
		// now stands on it; a live runc sandbox's layer is copied instead.
		st.inst.Layers = slices.Clone(layers)
	}
	return &runtime.Snapshot{Dir: dst, Layers: layers, Memory: memory}, nil
}

// SetNetwork implements runtime.Backend; Network returns what it was given.
func (b *Backend) SetNetwork(ctx context.Context, id string, n netpolicy.Egress) error {
	return b.update(ctx, OpSetNetwork, id, func(st *instanceState) error {
		st.network = n
		return nil
	})
}

// Network returns sandbox id's current network settings.
func (b *Backend) Network(id string) (netpolicy.Egress, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return netpolicy.Egress{}, false
	}
	return st.network, true
}

// Export implements runtime.Backend: it writes an empty layer tar (and an
// empty memory image when the sandbox is checkpointed), so callers can
// carry and clean up what a real export leaves.
func (b *Backend) Export(ctx context.Context, id, dst string) (*runtime.Export, error) {
	var out *runtime.Export
	err := b.update(ctx, OpExport, id, func(st *instanceState) error {
		if st.inst.State == runtime.StateRunning {
			return fmt.Errorf("exporting sandbox %s: it is running: %w", id, errdefs.ErrFailedPrecondition)
		}
		if err := os.Mkdir(dst, 0o700); err != nil {
			return fmt.Errorf("creating export dir: %w", err)
		}
		var empty bytes.Buffer
		if err := tar.NewWriter(&empty).Close(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, runtime.ExportLayer), empty.Bytes(), 0o600); err != nil {
			return err
		}
		out = &runtime.Export{Layers: slices.Clone(st.inst.Layers), Memory: st.inst.Checkpointed}
		if out.Memory {
			return os.Mkdir(filepath.Join(dst, runtime.ExportMemory), 0o700)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// remount checks mounts as the oci backend does (valid, the targets the
// sandbox was created with) and makes them st's.
func remount(st *instanceState, mounts []runtime.Mount) error {
	if err := runtime.CheckMounts(mounts, nil); err != nil {
		return err
	}
	want := make([]string, 0, len(st.mounts))
	for _, m := range st.mounts {
		want = append(want, m.Target)
	}
	got := make([]string, 0, len(mounts))
	for _, m := range mounts {
		got = append(got, m.Target)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("volume mounts %v: the sandbox was created with %v: %w", got, want, errdefs.ErrInvalidArgument)
	}
	st.mounts = slices.Clone(mounts)
	return nil
}
