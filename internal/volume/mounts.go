package volume

import (
	"context"
	"errors"
	"fmt"
	"io"
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
		if err := checkMountPath(m.Path); err != nil {
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

func checkMountPath(p string) error {
	bad := func(why string) error {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("volume mount path %q %s", p, why))
	}
	switch {
	case !strings.HasPrefix(p, "/"):
		return bad("is not absolute")
	case len(p) > maxPath || strings.IndexByte(p, 0) >= 0:
		return bad("is too long or holds a NUL byte")
	case path.Clean(p) != p:
		return bad("is not clean")
	case p == "/":
		return bad("would cover the whole sandbox")
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

// withContent runs fn on the volume's root.
func (s *Service) withContent(ctx context.Context, v *store.Volume, fn func(*content) error) error {
	dir, err := s.o.Backend.Path(ctx, v.ID)
	if err != nil {
		return err
	}
	c, err := openContent(dir)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// ListDir lists below path, depth levels down (less than 1: one).
func (s *Service) ListDir(ctx context.Context, v *store.Volume, p string, depth int) (out []Entry, err error) {
	err = s.withContent(ctx, v, func(c *content) error { out, err = c.list(p, depth); return err })
	return out, err
}

// MakeDir makes a directory (with force its parents, and an existing one
// is no error).
func (s *Service) MakeDir(ctx context.Context, v *store.Volume, p string, a Attrs, force bool) (e Entry, err error) {
	err = s.withContent(ctx, v, func(c *content) error { e, err = c.mkdir(p, a, force); return err })
	return e, err
}

// Stat describes path; a symlink is not followed.
func (s *Service) Stat(ctx context.Context, v *store.Volume, p string) (e Entry, err error) {
	err = s.withContent(ctx, v, func(c *content) error { e, err = c.stat(p); return err })
	return e, err
}

// SetAttrs changes the owner and mode of path.
func (s *Service) SetAttrs(ctx context.Context, v *store.Volume, p string, a Attrs) (e Entry, err error) {
	err = s.withContent(ctx, v, func(c *content) error { e, err = c.setAttrs(p, a); return err })
	return e, err
}

// Remove removes path and all below it; not the root.
func (s *Service) Remove(ctx context.Context, v *store.Volume, p string) error {
	return s.withContent(ctx, v, func(c *content) error { return c.remove(p) })
}

// Open opens a regular file for reading.
func (s *Service) Open(ctx context.Context, v *store.Volume, p string) (r io.ReadCloser, e Entry, err error) {
	err = s.withContent(ctx, v, func(c *content) error { r, e, err = c.open(p); return err })
	return r, e, err
}

// Write writes a file from r. On a backend the kernel does not cap, the
// file may take at most what is left of the volume's size.
func (s *Service) Write(ctx context.Context, v *store.Volume, p string, r io.Reader, a Attrs, force bool) (Entry, error) {
	limit := int64(-1)
	if !s.o.Backend.Capped() {
		used, size, err := s.o.Backend.Usage(ctx, v.ID)
		if err != nil {
			return Entry{}, err
		}
		limit = max(size-used, 0)
	}
	var e Entry
	err := s.withContent(ctx, v, func(c *content) error {
		var err error
		e, err = c.write(p, r, a, force, limit)
		return err
	})
	return e, err
}
