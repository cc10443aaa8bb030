// Package nettest builds throwaway network fixtures for tests of the network
// layer and the runtime backends: namespaces held by a file descriptor only,
// goroutine-safe "run this inside that netns" and an "outside world" server
// reachable only by routing through the host. Everything a helper creates is
// removed by t.Cleanup, and nothing here ever sends traffic to an address the
// test did not create.
package nettest

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NewNetns creates a network namespace that lives as long as the test holds
// its handle; no file is pinned.
func NewNetns(t testing.TB) netns.NsHandle {
	t.Helper()
	type result struct {
		h   netns.NsHandle
		err error
	}
	c := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			c <- result{err: err}
			return
		}
		defer orig.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			c <- result{err: err}
			return
		}
		h, err := netns.Get()
		if rerr := netns.Set(orig); rerr != nil {
			c <- result{err: rerr} // thread stays locked and is discarded
			return
		}
		runtime.UnlockOSThread()
		c <- result{h, err}
	}()
	r := <-c
	if r.err != nil {
		t.Fatalf("creating netns: %v", r.err)
	}
	t.Cleanup(func() { r.h.Close() })
	return r.h
}

// Do runs fn on an OS thread switched into ns. Sockets fn creates belong to
// ns for their whole life, whichever goroutine uses them afterwards.
func Do(ns netns.NsHandle, fn func() error) error {
	c := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			c <- err
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			runtime.UnlockOSThread()
			c <- fmt.Errorf("entering netns: %w", err)
			return
		}
		fnErr := fn()
		if err := netns.Set(orig); err != nil {
			c <- fmt.Errorf("leaving netns: %w", err) // thread stays locked and is discarded
			return
		}
		runtime.UnlockOSThread()
		c <- fnErr
	}()
	return <-c
}

// DoPath is Do for a netns pinned at path.
func DoPath(path string, fn func() error) error {
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return fmt.Errorf("opening netns %s: %w", path, err)
	}
	defer ns.Close()
	return Do(ns, fn)
}

// RequiresRoot skips t unless it runs as root.
func RequiresRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: requires root")
	}
}
