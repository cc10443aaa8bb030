package runtime

import (
	"context"
	"net/netip"
)

// ConnSettler is a Backend that must wait, after the manager has closed
// the proxied connections into a sandbox and before it pauses, checkpoints
// or snapshots it, for the sandbox to close its own ends: runsc migrates a
// connection still open inside with a checkpoint, and a migrated
// connection deafens the restored network stack. The manager calls it
// when it asserts a Backend to it; other backends need not implement it.
type ConnSettler interface {
	// SettleClosed returns once no host socket to ip waits for the
	// sandbox to close its end, after a bound of its own, or when ctx ends.
	SettleClosed(ctx context.Context, ip netip.Addr)
}
