package network

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// checkNoOverlap refuses a subnet that overlaps any IPv4 route of the host
// (all tables, so also local addresses), except routes through our own bridge
// (ignoreLink, from an earlier run) and default routes. Overlapping would
// make sandboxes shadow, or be shadowed by, real networks.
func checkNoOverlap(subnet netip.Prefix, ignoreLink int) error {
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("listing host routes: %w", err)
	}
	for _, r := range routes {
		if r.Dst == nil || (ignoreLink != 0 && r.LinkIndex == ignoreLink) {
			continue
		}
		dst, ok := prefixFromIPNet(r.Dst.IP, r.Dst.Mask)
		if !ok || dst.Bits() == 0 {
			continue
		}
		if dst.Overlaps(subnet) {
			return fmt.Errorf("subnet %s overlaps host route %s (table %d, link %d): %w",
				subnet, dst, r.Table, r.LinkIndex, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

func prefixFromIPNet(ip []byte, mask []byte) (netip.Prefix, bool) {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.Prefix{}, false
	}
	ones := 0
	for _, b := range mask {
		for ; b != 0; b <<= 1 {
			ones++
		}
	}
	return netip.PrefixFrom(addr.Unmap(), ones).Masked(), true
}
