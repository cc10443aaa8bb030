package apiserver

import (
	"context"
	"io"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/volume"
)

// Volumes is what the /volumes and /volumecontent routes ask of
// *volume.Service. team is the caller's team; "" (the admin key) sees
// every team's volumes. A volume of another team is ErrNotFound, never
// ErrPermissionDenied, so that ids do not leak. Content calls take the
// volume Authorize returned for the request's bearer token, and paths as
// the client sent them (the service cleans and confines them).
type Volumes interface {
	Create(ctx context.Context, team, name string) (*store.Volume, error)
	List(ctx context.Context, team string) ([]volume.Info, error)
	Get(ctx context.Context, team, id string) (*volume.Info, error)
	// Delete refuses (ErrFailedPrecondition) while a running or paused
	// sandbox mounts the volume.
	Delete(ctx context.Context, team, id string) error

	// Authorize checks a content API bearer token: ErrUnauthenticated
	// without one, ErrNotFound for an unknown volume, ErrPermissionDenied
	// for a token of another volume.
	Authorize(ctx context.Context, id, token string) (*store.Volume, error)
	// ListDir lists what is below a directory, depth levels down (1: its
	// children).
	ListDir(ctx context.Context, v *store.Volume, path string, depth int) ([]volume.Entry, error)
	// MakeDir makes a directory; with force, its missing parents too, and
	// an existing directory is then no error (ErrAlreadyExists without).
	MakeDir(ctx context.Context, v *store.Volume, path string, a volume.Attrs, force bool) (volume.Entry, error)
	Stat(ctx context.Context, v *store.Volume, path string) (volume.Entry, error)
	SetAttrs(ctx context.Context, v *store.Volume, path string, a volume.Attrs) (volume.Entry, error)
	// Remove removes a file, a symlink or a directory with everything in
	// it; the root cannot be removed.
	Remove(ctx context.Context, v *store.Volume, path string) error
	// Open opens a regular file for reading.
	Open(ctx context.Context, v *store.Volume, path string) (io.ReadCloser, volume.Entry, error)
	// Write writes a file from r, replacing an existing one only with
	// force (ErrAlreadyExists without); a full volume is ErrNoSpace.
	Write(ctx context.Context, v *store.Volume, path string, r io.Reader, a volume.Attrs, force bool) (volume.Entry, error)
}
