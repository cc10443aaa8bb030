package nettest

import (
	"crypto/rand"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/warren-sandbox/warren/internal/network/linkns"
)

// FreeSubnet returns a /bits prefix inside within that overlaps no host
// route, so a test's bridge never collides with another test's or a
// server's network on a shared host.
func FreeSubnet(t testing.TB, within netip.Prefix, bits int) netip.Prefix {
	t.Helper()
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	step := uint32(1) << (32 - bits)
	b := within.Masked().Addr().As4()
	base := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n := uint32(1) << (bits - within.Bits())
	// Start at a random candidate: tests on a shared host then rarely race
	// for the same range between checking and creating their bridge.
	var r [4]byte
	_, _ = rand.Read(r[:])
	start := (uint32(r[0])<<24 | uint32(r[1])<<16 | uint32(r[2])<<8 | uint32(r[3])) % n
	for i := range n {
		v := base + ((start+i)%n)*step
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), bits)
		if !linkns.OverlapsRoute(p, routes) {
			return p
		}
	}
	t.Fatalf("no free /%d in %s", bits, within)
	return netip.Prefix{}
}
