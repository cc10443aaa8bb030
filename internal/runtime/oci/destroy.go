package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/log"
)

// Destroy implements runtime.Backend.Destroy: it kills every process, then
// frees the container, cgroup, rootfs mount, network and state dir. Each
// step runs even when an earlier one failed, and the state dir (the proof
// that something is held) goes last, so a failed Destroy can be retried.
func (b *Backend) Destroy(ctx context.Context, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	ctx = log.With(ctx, "sandbox", id, "backend", b.name)
	unlock := b.locks.lock(id)
	defer unlock()
	dir := b.dir(id)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil // never created, or fully destroyed
	}
	cerr := b.deleteContainer(ctx, id)
	crashpoint.Hit("oci.destroy.container")
	errs := []error{
		cerr,
		unmountAll(dir),
		b.net.Detach(ctx, id),
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("destroying sandbox %s: %w", id, err)
	}
	if err := removeStateDir(dir); err != nil {
		return fmt.Errorf("destroying sandbox %s: %w", id, err)
	}
	log.G(ctx).Debug("sandbox destroyed")
	return nil
}

// deleteContainer kills the container's processes and deletes it from the
// runtime, then removes its cgroup (killing anything the runtime missed).
//
// We kill through the cgroup ourselves first. For runc a plain delete then
// suffices: `runc delete --force` sleeps 100 ms before it even checks that
// its SIGKILL worked, which would be most of Destroy's time. runsc deletes
// a killed sandbox only with --force, and then waits (polling every 100 ms)
// until the sandbox process is reaped by whoever is its parent, normally
// PID 1.
func (b *Backend) deleteContainer(ctx context.Context, id string) error {
	if err := b.cg.kill(b.cgroupPath(id), killTimeout); err != nil {
		log.G(ctx).Warn("killing sandbox processes", "err", err)
	}
	var err error
	if b.name == Runc {
		if err = b.cli.delete(ctx, id); err != nil {
			// Still running (a process escaped the kill?) or half-created.
			log.G(ctx).Debug("plain delete failed; forcing", "err", err)
		}
	}
	if b.name != Runc || err != nil {
		err = b.cli.forceDelete(ctx, id)
	}
	return errors.Join(err, b.cg.remove(b.cgroupPath(id)))
}

// forgotten reports whether runsc keeps no state for container id (Stop or
// Destroy deleted it, or the host rebooted): the sandbox is then stopped,
// and deleting it would find nothing, so a Start can skip both runsc
// commands (`state`, `delete`), each a whole start of the runsc binary and
// together 80-300 ms of a resume on a loaded 2-core host. runc: never
// (it is asked, as before).
func (b *Backend) forgotten(id string) bool {
	if b.cli.guard == nil {
		return false
	}
	_, err := os.Lstat(b.cli.guard.stateFile(id))
	return errors.Is(err, os.ErrNotExist)
}

// killTimeout bounds waiting for killed sandbox processes to leave the cgroup.
const killTimeout = 5 * time.Second

// removeStateDir deletes dir, refusing while anything is mounted below it:
// RemoveAll would otherwise descend into the mount (the rootfs overlay,
// whose lower dir is the shared template).
func removeStateDir(dir string) error {
	mounts, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	if len(mounts) > 0 {
		return fmt.Errorf("not removing %s: still mounted: %v", dir, mounts)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing state dir: %w", err)
	}
	return nil
}
