package lifecycle

import (
	"context"
	"fmt"
	"slices"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Volumes finds the volumes a sandbox mounts (*volume.Service).
type Volumes interface {
	// Resolve checks a create's mounts against team's volumes (by name;
	// another team's is ErrNotFound) and their paths, and returns them
	// with VolumeID filled in.
	Resolve(ctx context.Context, team string, mounts []store.VolumeMount) ([]store.VolumeMount, error)
	// HostPath is where volume volumeID's directory is on this host,
	// ready to be mounted (made available first when it is not).
	HostPath(ctx context.Context, volumeID string) (string, error)
}

// createMounts resolves the volumes a create mounts: the request's, or
// from a snapshot with a memory image its own, which the request may only
// name again (the image holds files open at those paths); from a
// disk-only snapshot the request's, else the snapshot's.
func (m *Manager) createMounts(ctx context.Context, req sandbox.CreateRequest, team string, snap *store.Snapshot) ([]store.VolumeMount, error) {
	mounts := req.VolumeMounts
	if snap != nil && len(snap.VolumeMounts) > 0 {
		if snap.Memory && len(mounts) > 0 && !sameMounts(mounts, snap.VolumeMounts) {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("snapshot '%s' keeps its memory with volumes mounted as %s; a sandbox from it mounts the same volumes, not %s", snap.ID, mountList(snap.VolumeMounts), mountList(mounts)))
		}
		if snap.Memory || len(mounts) == 0 {
			mounts = snap.VolumeMounts
		}
	}
	if len(mounts) == 0 {
		return nil, nil
	}
	if m.opts.Volumes == nil {
		return nil, errdefs.New(errdefs.ErrNotImplemented, "volumes are not available on this server, so volumeMounts cannot be used")
	}
	named := make([]store.VolumeMount, len(mounts))
	for i, v := range mounts {
		// By name: the team's volume of that name now (a snapshot's was
		// resolved when it was taken).
		named[i] = store.VolumeMount{Name: v.Name, Path: v.Path}
	}
	resolved, err := m.opts.Volumes.Resolve(ctx, team, named)
	if err != nil {
		return nil, fmt.Errorf("volume mounts: %w", err)
	}
	return resolved, nil
}

// hostMounts is where the recorded volume mounts are on this host, asked
// again each time: a restart or another node may have them elsewhere.
func (m *Manager) hostMounts(ctx context.Context, mounts []store.VolumeMount) ([]runtime.Mount, error) {
	if len(mounts) == 0 {
		return nil, nil
	}
	if m.opts.Volumes == nil {
		return nil, errdefs.New(errdefs.ErrNotImplemented, "the sandbox mounts volumes, which are not available on this server")
	}
	out := make([]runtime.Mount, 0, len(mounts))
	for _, v := range mounts {
		dir, err := m.opts.Volumes.HostPath(ctx, v.VolumeID)
		if err != nil {
			return nil, fmt.Errorf("volume %q: %w", v.Name, err)
		}
		out = append(out, runtime.Mount{Source: dir, Target: v.Path})
	}
	return out, nil
}

// sameMounts: a and b mount the same names at the same paths, in any order.
func sameMounts(a, b []store.VolumeMount) bool {
	return slices.Equal(mountKeys(a), mountKeys(b))
}

func mountKeys(mounts []store.VolumeMount) []string {
	out := make([]string, len(mounts))
	for i, v := range mounts {
		out[i] = v.Name + ":" + v.Path
	}
	slices.Sort(out)
	return out
}

func mountList(mounts []store.VolumeMount) string {
	if len(mounts) == 0 {
		return "none"
	}
	return fmt.Sprint(mountKeys(mounts))
}
