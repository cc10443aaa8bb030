package volume

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Backend holds volumes' data. Ids are the service's (safe file names);
// a backend checks them anyway, as they become paths.
type Backend interface {
	// Create makes an empty volume of sizeMB; ErrAlreadyExists if the id
	// has one.
	Create(ctx context.Context, id string, sizeMB int) error
	// Path returns the host directory that is the volume's root, ready to
	// be read, written or bind-mounted; ErrNotFound without the volume.
	Path(ctx context.Context, id string) (string, error)
	// Usage returns the bytes the volume's files take and its size limit.
	Usage(ctx context.Context, id string) (used, size int64, err error)
	// Delete removes the volume's data; a volume already gone is no error
	// (the record goes first, so a retry must be able to finish).
	Delete(ctx context.Context, id string) error
	// Capped reports whether the kernel holds every writer to the size
	// (ENOSPC). When it does not, the content API checks the limit before
	// writing and a volume over it is refused new mounts.
	Capped() bool
}

// idPattern is what a backend accepts as an id: a file name, no path.
var idPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func checkID(id string) error {
	if !idPattern.MatchString(id) {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("invalid volume id %q", id))
	}
	return nil
}

// NewBackend picks a server's backend: Shared under sharedDir when the
// server has one (a cluster node: every node must see every volume),
// else Local under dataDir/volumes.
func NewBackend(dataDir, sharedDir string) (Backend, error) {
	if sharedDir != "" {
		return NewShared(sharedDir)
	}
	return NewLocal(filepath.Join(dataDir, "volumes"))
}
