package network

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// quietPort makes a sandbox's host end a bridge port that hears only its
// own traffic: isolated from the other sandbox ports; no unknown-unicast,
// multicast or broadcast flooding towards it; no learning; and a static
// forwarding entry for the sandbox's MAC instead. Without this, the first
// frame the host sends a new sandbox (its MAC not yet learnt) and every
// multicast the host sends (IPv6 router solicitations) reached every
// sandbox on the bridge: one wake-up of every idle gVisor Sentry per
// create. Without learning, a sandbox that forges another's source MAC
// cannot move that sandbox's forwarding entry to its own port either.
// The host never needs to flood: its neighbour entries for sandboxes are
// pinned (pinNeighbor).
func quietPort(port *netlink.Veth, mac net.HardwareAddr) error {
	idx := port.Attrs().Index
	fdb := &netlink.Neigh{
		LinkIndex:    idx,
		Family:       unix.AF_BRIDGE,
		Flags:        netlink.NTF_MASTER,
		State:        netlink.NUD_NOARP, // static: never aged out
		HardwareAddr: mac,
	}
	if err := netlink.NeighSet(fdb); err != nil {
		return fmt.Errorf("adding the forwarding entry of %s: %w", port.Name, err)
	}
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_BRIDGE)
	msg.Index = int32(idx)
	req.AddData(msg)
	info := nl.NewRtAttr(unix.IFLA_PROTINFO|unix.NLA_F_NESTED, nil)
	for attr, on := range map[int]bool{
		nl.IFLA_BRPORT_ISOLATED:      true,
		nl.IFLA_BRPORT_LEARNING:      false,
		nl.IFLA_BRPORT_UNICAST_FLOOD: false,
		nl.IFLA_BRPORT_MCAST_FLOOD:   false,
		nl.IFLA_BRPORT_BCAST_FLOOD:   false,
	} {
		v := byte(0)
		if on {
			v = 1
		}
		info.AddRtAttr(attr, []byte{v})
	}
	req.AddData(info)
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		return fmt.Errorf("setting up bridge port %s: %w", port.Name, err)
	}
	return nil
}

// disableIPv6 turns IPv6 off on the host's interface name; a host without
// IPv6 has nothing to turn off.
func disableIPv6(name string) error {
	err := os.WriteFile("/proc/sys/net/ipv6/conf/"+name+"/disable_ipv6", []byte("1"), 0)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("turning IPv6 off on %s: %w", name, err)
	}
	return nil
}
