package cachedfs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/log"
)

// Entry is where one recipe of a template lives in the cache directory's
// templates/ (name is the template's prefix, hash the recipe's):
//
//	<name>.lock               flock held by whoever builds
//	<name>-<hash>.log         output of the last build of <hash>
//	<name>-<hash>.tmp-<rand>/ a build in progress
//	<name>-<hash>/rootfs      a complete build, with its marker beside it
type Entry struct {
	Name, Templates, Final, Lock, Log string
}

// NewEntry names recipe hash of template name under cacheDir.
func NewEntry(cacheDir, name, hash string) Entry {
	t := filepath.Join(cacheDir, "templates")
	return Entry{
		Name:      name,
		Templates: t,
		Final:     filepath.Join(t, name+"-"+hash),
		Lock:      filepath.Join(t, name+".lock"),
		Log:       filepath.Join(t, name+"-"+hash+".log"),
	}
}

// Rootfs is the published rootfs.
func (e Entry) Rootfs() string { return filepath.Join(e.Final, "rootfs") }

// Staging is a build in progress, as handed to the builder.
type Staging struct {
	Dir  string   // the .tmp directory; Publish(Dir, Final, marker) commits it
	Lock *os.File // the held build lock, for the build's tools to inherit
	Log  *os.File // the build log, e.Log
}

// Rootfs is where the builder makes the tree.
func (s Staging) Rootfs() string { return filepath.Join(s.Dir, "rootfs") }

// Build takes the build lock (waiting while another process builds),
// returns the rootfs at once if hit now finds the complete build another
// process made, and otherwise removes what interrupted builds left and
// runs build in a fresh .tmp directory, which it removes (unmounting first)
// if build fails or is cancelled. build must publish on success.
func (e Entry) Build(ctx context.Context, progress io.Writer, hit func() bool, build func(Staging) error) (string, error) {
	lock, err := AcquireLock(ctx, e.Name, e.Lock, progress)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if hit() {
		return e.Rootfs(), nil
	}
	if err := RemoveLeftovers(e.Templates, e.Name, e.Final); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(e.Templates, filepath.Base(e.Final)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("creating build directory: %w", err)
	}
	logf, err := os.Create(e.Log)
	if err == nil {
		err = build(Staging{Dir: tmp, Lock: lock, Log: logf})
		logf.Close()
	} else {
		err = fmt.Errorf("creating build log: %w", err)
	}
	if err != nil {
		if rmErr := RemoveTree(tmp); rmErr != nil {
			log.G(ctx).Error("cleaning up failed build", "dir", tmp, "error", rmErr)
		}
		return "", err
	}
	return e.Rootfs(), nil
}
