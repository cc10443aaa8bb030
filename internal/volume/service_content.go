package volume

import (
	"context"
	"io"

	"github.com/warren-sandbox/warren/internal/store"
)

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
