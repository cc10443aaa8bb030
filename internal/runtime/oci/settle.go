package oci

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime"
)

// Before runsc checkpoints a sandbox, every TCP connection into it must
// be over on the sandbox's side too: one still open inside is migrated
// with the sandbox, and a migrated connection leaves the restored network
// stack deaf after the following checkpoint (seen with this gVisor). The
// host closes its ends first; envd then closes its own, which the host's
// sockets show by leaving the states that wait for the peer's FIN.
var _ runtime.ConnSettler = (*Backend)(nil)

const (
	// checkpointSettle is the pause after cutting when the host's socket
	// table cannot be read.
	checkpointSettle = 50 * time.Millisecond
	// checkpointSettleMax bounds the wait for envd to close its ends (it
	// may be busy; a checkpoint is not held up for longer).
	checkpointSettleMax = time.Second
)

// SettleClosed waits, after the manager has closed its proxied
// connections into the sandbox at ip and before it pauses, checkpoints or
// snapshots it, until no host socket to ip is still waiting for the
// sandbox to close its end, or checkpointSettleMax, or ctx ends. Only
// runsc migrates connections into a checkpoint; under runc it returns at
// once.
func (b *Backend) SettleClosed(ctx context.Context, ip netip.Addr) {
	if b.name != Runsc || !ip.IsValid() {
		return
	}
	settleClosed(ctx, ip)
}

func settleClosed(ctx context.Context, ip netip.Addr) {
	deadline := time.Now().Add(checkpointSettleMax)
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	for {
		n, err := halfClosedTo(ip)
		if err != nil {
			wait(checkpointSettle)
			return
		}
		if n == 0 || time.Now().After(deadline) {
			break
		}
		if !wait(2 * time.Millisecond) {
			return
		}
	}
	wait(2 * time.Millisecond) // for the last ACK to arrive
}

// halfClosedTo counts this network namespace's TCP sockets to ip that
// wait for the peer to close (FIN_WAIT1, FIN_WAIT2, CLOSING, LAST_ACK).
func halfClosedTo(ip netip.Addr) (int, error) {
	name := "/proc/net/tcp"
	if ip.Is6() && !ip.Is4In6() {
		name = "/proc/net/tcp6"
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	return countHalfClosed(data, procAddr(ip)), nil
}

// procAddr is ip as /proc/net/tcp{,6} prints it: each 32-bit word in
// the host's (little-endian) byte order, in hex.
func procAddr(ip netip.Addr) string {
	var sb strings.Builder
	b := ip.Unmap().AsSlice()
	for i := 0; i < len(b); i += 4 {
		fmt.Fprintf(&sb, "%02X%02X%02X%02X", b[i+3], b[i+2], b[i+1], b[i])
	}
	return sb.String()
}

// countHalfClosed counts the lines of a /proc/net/tcp table whose remote
// address is addr and whose state waits for the peer's FIN.
func countHalfClosed(table []byte, addr string) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		remote, _, ok := strings.Cut(f[2], ":")
		if !ok || remote != addr {
			continue
		}
		switch f[3] {
		case "04", "05", "0B", "09": // FIN_WAIT1, FIN_WAIT2, CLOSING, LAST_ACK
			n++
		}
	}
	return n
}
