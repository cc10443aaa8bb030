package oci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// runsc keeps two files per container in its --root:
// "<id>_sandbox:<id>.state" and "<id>_sandbox:<id>.lock", the flock(2)
// file guarding it. Every command that loads a container, `list` and
// `state` included, opens the lock file with O_CREATE before it reads the
// state file; `delete` removes both. A `list` that globbed the state file
// just before a `delete` removed it therefore makes the lock file again,
// empty, after the delete: nothing of the sandbox would be left but that
// file, and the run root would outlive a clean shutdown.
//
// rootGuard closes that window: readers (list, state) share it, and the
// removal of a deleted container's lock file takes it alone. A reader
// that starts after the removal no longer finds the state file, so it
// does not touch the container.
type rootGuard struct {
	dir string       // the runtime's --root
	mu  sync.RWMutex // mu is held shared by list and state, alone by forget
}

// read runs f, a command that may make lock files, under the guard.
func (g *rootGuard) read(f func() error) error {
	if g == nil {
		return f()
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return f()
}

// forget removes what a deleted container id left in the root: its lock
// file, once no command that could remake it is running. A state file
// still present means the container was not deleted, and its lock file is
// kept with it.
func (g *rootGuard) forget(id string) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.removeOrphan(id)
}

// stateFile is where runsc keeps container id's state.
func (g *rootGuard) stateFile(id string) string {
	return filepath.Join(g.dir, id+"_sandbox:"+id+".state")
}

func (g *rootGuard) removeOrphan(id string) error {
	state := g.stateFile(id)
	if _, err := os.Lstat(state); err == nil {
		return nil
	}
	if err := os.Remove(strings.TrimSuffix(state, ".state") + ".lock"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing runsc lock file of %s: %w", id, err)
	}
	return nil
}

// sweep removes every lock file without its state file, as forget would
// have: those of commands cut short by a crash of the server. It runs
// before anything else uses the runtime.
func (g *rootGuard) sweep() error {
	if g == nil {
		return nil
	}
	entries, err := os.ReadDir(g.dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("reading runsc root: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	for _, e := range entries {
		cid, sid, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".lock"), "_sandbox:")
		if !ok || cid != sid || !strings.HasSuffix(e.Name(), ".lock") || validID(cid) != nil {
			continue
		}
		if err := g.removeOrphan(cid); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sweeping runsc root: %w", err)
	}
	return nil
}
