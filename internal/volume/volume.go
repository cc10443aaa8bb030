// Package volume keeps teams' volumes: persistent directories that outlive
// sandboxes, which sandboxes mount read-write by name (volumeMounts at
// create) and which E2B's volume content API (/volumecontent/{id}/...)
// reads and writes with the volume's token. A Backend holds the data: on
// one machine an ext4 image per volume, loop-mounted on the host, so its
// size limit is a real ENOSPC; on a cluster a directory on the storage
// every node shares (--shared-dir). The Service joins a backend to the
// store's records: names, tokens, team quotas, and which sandboxes mount
// a volume.
package volume

import (
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// The types of Entry, as E2B's VolumeEntryStat names them.
const (
	TypeFile      = "file"
	TypeDirectory = "directory"
	TypeSymlink   = "symlink"
	TypeUnknown   = "unknown"
)

// Entry is one file, directory or symlink of a volume.
type Entry struct {
	Name string
	Type string
	// Path is from the volume's root and starts with "/".
	Path                string
	Size                int64
	Mode                uint32 // permission bits only (0o777 and the sticky, setuid and setgid bits)
	UID, GID            uint32
	ATime, MTime, CTime time.Time
	// Target is a symlink's target, as stored.
	Target string
}

// Attrs are the owner and mode a write, a mkdir or an update sets; nil
// fields are left as they are (or the defaults: root, 0644 for a file,
// 0755 for a directory).
type Attrs struct {
	UID, GID, Mode *uint32
}

// Info is a volume with what warren shows of it beside E2B's fields.
type Info struct {
	store.Volume
	// UsedBytes is what its files take on the backend.
	UsedBytes int64
	// Sandboxes are the running or paused sandboxes that mount it.
	Sandboxes []string
}
