package apiserver

import (
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/snapshot"
	"github.com/warren-sandbox/warren/internal/store"
)

// machine is the manager with the snapshot room beside it, registered as
// internal/server does: the API's snapshot and fork calls are the room's.
type machine struct {
	*lifecycle.Manager
	*snapshot.Room
}

// withSnapshots registers a snapshot room keeping snapshots in dir ("":
// none) on mgr.
func withSnapshots(mgr *lifecycle.Manager, st store.Store, dir string) *machine {
	r := snapshot.New(mgr, snapshot.Options{Store: st, Dir: dir})
	mgr.SetSnapshots(r)
	return &machine{Manager: mgr, Room: r}
}
