package network

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// ensureNetnsDir creates dir and makes it a shared mount point, as
// `ip netns add` does with /run/netns: a netns bind mount removed here then
// also disappears from every mount namespace that was copied while it
// existed (a runtime's helper processes), so the netns really dies.
func ensureNetnsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating netns dir: %w", err)
	}
	err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if !errors.Is(err, unix.EINVAL) {
		return wrapMountErr("making %s a shared mount", dir, err)
	}
	// EINVAL: dir is not a mount point yet. Bind it onto itself first.
	if err := unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mounting %s onto itself: %w", dir, err)
	}
	err = unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	return wrapMountErr("making %s a shared mount", dir, err)
}

func wrapMountErr(format, path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", path, err)
}

// createNetns creates a new network namespace and pins it with a bind mount
// at path. The calling goroutine's namespace is untouched: the unshare
// happens on a dedicated, locked OS thread that switches back before it is
// released, and that is destroyed instead if switching back fails.
func createNetns(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("creating netns file: %w", err)
	}
	f.Close()
	errc := make(chan error, 1)
	go func() { errc <- unshareAndPin(path) }()
	if err := <-errc; err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// unshareAndPin must run on its own goroutine: on a failed restore it returns
// with the OS thread still locked, which makes Go terminate that thread
// rather than reuse it in the wrong namespace.
func unshareAndPin(path string) error {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening current netns: %w", err)
	}
	defer orig.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("unsharing netns: %w", err)
	}
	mountErr := unix.Mount("/proc/thread-self/ns/net", path, "none", unix.MS_BIND, "")
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("restoring netns after unshare: %w", err) // thread stays locked and dies
	}
	runtime.UnlockOSThread()
	if mountErr != nil {
		return fmt.Errorf("pinning netns at %s: %w", path, mountErr)
	}
	return nil
}

// deleteNetns unpins the namespace at path and removes the file; the kernel
// frees the namespace (and the veth end in it) once nothing else holds it. A
// missing file is not an error.
func deleteNetns(path string) error {
	err := unix.Unmount(path, unix.MNT_DETACH)
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmounting netns %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing netns file %s: %w", path, err)
	}
	return nil
}
