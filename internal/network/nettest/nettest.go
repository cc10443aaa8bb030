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
	"testing"

	"github.com/vishvananda/netns"

	"github.com/warren-sandbox/warren/internal/network/linkns"
)

// NewNetns creates a network namespace that lives as long as the test holds
// its handle; no file is pinned.
func NewNetns(t testing.TB) netns.NsHandle {
	t.Helper()
	h, err := linkns.New()
	if err != nil {
		t.Fatalf("creating netns: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// Do runs fn on an OS thread switched into ns. Sockets fn creates belong to
// ns for their whole life, whichever goroutine uses them afterwards.
func Do(ns netns.NsHandle, fn func() error) error { return linkns.Do(ns, fn) }

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
