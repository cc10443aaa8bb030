package network

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/vishvananda/netlink"
)

// ensureBridge creates the bridge if it is missing (or reuses it), gives it
// exactly the gateway address among IPv4 addresses, and brings it up.
func ensureBridge(name string, gw netip.Prefix, mtu int) (netlink.Link, error) {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	switch {
	case errors.As(err, &notFound):
		// A fixed MAC: by default a bridge takes the lowest MAC among its
		// ports, so it would change as sandboxes come and go and leave stale
		// gateway entries in their neighbour caches.
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name, MTU: mtu, HardwareAddr: macFor(gw.Addr())}}
		if err := netlink.LinkAdd(br); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("creating bridge %s: %w", name, err)
		}
		if link, err = netlink.LinkByName(name); err != nil {
			return nil, fmt.Errorf("looking up bridge %s: %w", name, err)
		}
	case err != nil:
		return nil, fmt.Errorf("looking up bridge %s: %w", name, err)
	case link.Type() != "bridge":
		return nil, fmt.Errorf("link %s exists and is a %s, not a bridge", name, link.Type())
	}
	if mac := macFor(gw.Addr()); link.Attrs().HardwareAddr.String() != mac.String() {
		if err := netlink.LinkSetHardwareAddr(link, mac); err != nil {
			return nil, fmt.Errorf("setting the MAC of bridge %s: %w", name, err)
		}
	}
	if err := setOnlyAddr(link, gw); err != nil {
		return nil, err
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return nil, fmt.Errorf("bringing up bridge %s: %w", name, err)
	}
	return link, nil
}

// setOnlyAddr makes want the link's only IPv4 address: a subnet changed in
// the configuration must not leave the old gateway address behind.
func setOnlyAddr(link netlink.Link, want netip.Prefix) error {
	addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("listing addresses of %s: %w", link.Attrs().Name, err)
	}
	found := false
	for _, a := range addrs {
		if a.IP.Equal(want.Addr().AsSlice()) && a.Mask.String() == net.CIDRMask(want.Bits(), 32).String() {
			found = true
			continue
		}
		if err := netlink.AddrDel(link, &a); err != nil {
			return fmt.Errorf("removing stale address %s from %s: %w", a.IPNet, link.Attrs().Name, err)
		}
	}
	if found {
		return nil
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{
		IP:   want.Addr().AsSlice(),
		Mask: net.CIDRMask(want.Bits(), 32),
	}}
	if err := netlink.AddrReplace(link, addr); err != nil {
		return fmt.Errorf("adding %s to %s: %w", want, link.Attrs().Name, err)
	}
	return nil
}

// deleteBridge removes the bridge; a missing bridge is not an error.
func deleteBridge(name string) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("looking up bridge %s: %w", name, err)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("deleting bridge %s: %w", name, err)
	}
	return nil
}

// writeSysctl writes value to /proc/sys/<key> (key with slashes).
func writeSysctl(key, value string) error {
	if err := os.WriteFile("/proc/sys/"+key, []byte(value), 0o644); err != nil {
		return fmt.Errorf("setting sysctl %s=%s: %w", key, value, err)
	}
	return nil
}
