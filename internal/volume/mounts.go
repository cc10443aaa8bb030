package volume

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// MaxMounts is the most volumes one sandbox mounts.
const MaxMounts = 16

// reserved are the sandbox paths a volume may not cover: the kernel's
// and warren's own.
var reserved = []string{"/proc", "/sys", "/dev", "/.warren"}

// Resolve checks a create's mounts and fills each one's VolumeID from
// the team's volume of that Name.
func (s *Service) Resolve(ctx context.Context, team string, mounts []store.VolumeMount) ([]store.VolumeMount, error) {
	if len(mounts) > MaxMounts {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("at most %d volume mounts", MaxMounts))
	}
	out := make([]store.VolumeMount, 0, len(mounts))
	for i, m := range mounts {
		if !ValidName(m.Name) {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("%q in volume mounts is not a volume name (1 to 63 letters, digits, '_' or '-')", m.Name))
		}
		if err := CheckMountPath(m.Path); err != nil {
			return nil, err
		}
		for _, o := range mounts[:i] {
			if inside(m.Path, o.Path) || inside(o.Path, m.Path) {
				return nil, errdefs.New(errdefs.ErrInvalidArgument,
					fmt.Sprintf("volume mounts at %s and %s overlap", o.Path, m.Path))
			}
		}
		v, err := s.o.Store.GetVolumeByName(ctx, team, m.Name)
		if errors.Is(err, errdefs.ErrNotFound) {
			return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("volume %q not found", m.Name))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, store.VolumeMount{VolumeID: v.ID, Name: v.Name, Path: m.Path})
	}
	return out, nil
}

// CheckMountPath checks where a volume is to appear in a sandbox: an
// absolute, clean path that covers neither the sandbox's root nor the
// kernel's and warren's own directories. The REST edge checks a create's
// mounts with it before the manager resolves them.
func CheckMountPath(p string) error {
	bad := func(why string) error {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("volume mount path %q %s", p, why))
	}
	switch {
	case len(p) > maxPath || strings.IndexByte(p, 0) >= 0:
		return bad("is longer than 4096 bytes or holds a NUL")
	case !path.IsAbs(p) || path.Clean(p) != p:
		return bad("must be absolute and clean (no '..', '.', '//' or trailing '/')")
	case p == "/":
		return bad("would cover the sandbox's root")
	}
	for _, r := range reserved {
		if inside(p, r) {
			return bad("is under " + r)
		}
	}
	return nil
}

// inside reports whether p is dir or below it (both clean and absolute).
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// HostPath is the host directory to bind-mount for the volume. A volume
// the kernel does not cap (Shared) that is past its size is refused, so
// one sandbox cannot keep filling shared storage through new mounts.
func (s *Service) HostPath(ctx context.Context, volumeID string) (string, error) {
	dir, err := s.o.Backend.Path(ctx, volumeID)
	if err != nil || s.o.Backend.Capped() {
		return dir, err
	}
	used, size, err := s.o.Backend.Usage(ctx, volumeID)
	if err != nil {
		return "", err
	}
	if used > size {
		return "", errdefs.New(errdefs.ErrNoSpace, fmt.Sprintf(
			"volume %s takes %d bytes, past its size of %d: free some through the content API first", volumeID, used, size))
	}
	return dir, nil
}
