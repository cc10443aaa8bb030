package network

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// sandboxIfName is the interface name inside every sandbox.
const sandboxIfName = "eth0"

// hostVethName derives the host end's name from the bridge and sandbox id.
// Deterministic, so Detach finds the link even when nothing was recorded
// (a crash mid-create); the bridge name is mixed in so a test bridge and the
// production one never name a link alike. "wv" + 10 hex digits fits
// IFNAMSIZ.
func hostVethName(bridge, id string) string {
	sum := sha256.Sum256([]byte(bridge + "/" + id))
	return "wv" + hex.EncodeToString(sum[:5])
}

// macFor derives eth0's MAC from its IPv4 address, as Docker does
// (02:42:a.b.c.d, locally administered): when an address is reused by a new
// sandbox, a neighbour entry the host still caches for it stays correct.
func macFor(ip netip.Addr) net.HardwareAddr {
	b := ip.As4()
	return net.HardwareAddr{0x02, 0x42, b[0], b[1], b[2], b[3]}
}

// vethConfig is what one sandbox's veth pair needs.
type vethConfig struct {
	hostName  string
	bridgeIdx int
	mtu       int
	ip        netip.Addr
	prefix    netip.Prefix // the subnet, for eth0's mask
	gateway   netip.Addr
	ns        netns.NsHandle
}

// createVeth creates the pair with the peer born inside the netns as eth0
// (no rename or move step), makes the host end an isolated, up port of the
// bridge, and configures the inside: address, eth0 and lo up, default route.
func createVeth(c vethConfig) (retErr error) {
	veth := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{
			Name:        c.hostName,
			MTU:         c.mtu,
			MasterIndex: c.bridgeIdx,
		},
		PeerName:         sandboxIfName,
		PeerMTU:          uint32(c.mtu),
		PeerHardwareAddr: macFor(c.ip),
		PeerNamespace:    netlink.NsFd(int(c.ns)),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("creating veth %s: %w", c.hostName, err)
	}
	defer func() {
		if retErr != nil {
			_ = netlink.LinkDel(veth) // ours: LinkAdd succeeded
		}
	}()
	// Isolated ports cannot exchange frames with each other, only with the
	// bridge itself (the host): the cheapest sandbox-to-sandbox barrier.
	if err := quietPort(veth, macFor(c.ip)); err != nil {
		return err
	}
	// Down until IPv6 is off on the port: a port needs no address of its
	// own, and with one the host would send its duplicate-address probes,
	// router solicitations and multicast reports into the new sandbox.
	if err := disableIPv6(c.hostName); err != nil {
		return err
	}
	if err := netlink.LinkSetUp(veth); err != nil {
		return fmt.Errorf("bringing up %s: %w", c.hostName, err)
	}
	return configureInside(c)
}

// configureInside sets up eth0 and lo through a netlink socket opened inside
// the netns, so no goroutine of ours ever switches namespace here.
func configureInside(c vethConfig) error {
	h, err := netlink.NewHandleAt(c.ns)
	if err != nil {
		return fmt.Errorf("opening netlink in sandbox netns: %w", err)
	}
	defer h.Close()
	eth, err := h.LinkByName(sandboxIfName)
	if err != nil {
		return fmt.Errorf("finding %s in sandbox netns: %w", sandboxIfName, err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: c.ip.AsSlice(), Mask: net.CIDRMask(c.prefix.Bits(), 32)}}
	// Replace, not add: Reconfigure runs this again on a netns whose
	// address a runtime may or may not have taken away.
	if err := h.AddrReplace(eth, addr); err != nil {
		return fmt.Errorf("adding %s to %s: %w", c.ip, sandboxIfName, err)
	}
	if err := h.LinkSetUp(eth); err != nil {
		return fmt.Errorf("bringing up %s: %w", sandboxIfName, err)
	}
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("finding lo in sandbox netns: %w", err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("bringing up lo: %w", err)
	}
	route := &netlink.Route{LinkIndex: eth.Attrs().Index, Gw: c.gateway.AsSlice()}
	if err := h.RouteReplace(route); err != nil {
		return fmt.Errorf("adding default route via %s: %w", c.gateway, err)
	}
	// The bridge's MAC is fixed (derived from the gateway address), so the
	// sandbox needs no ARP to answer the host either.
	gw := &netlink.Neigh{
		LinkIndex:    eth.Attrs().Index,
		Family:       netlink.FAMILY_V4,
		State:        netlink.NUD_PERMANENT,
		IP:           c.gateway.AsSlice(),
		HardwareAddr: macFor(c.gateway),
	}
	if err := h.NeighSet(gw); err != nil {
		return fmt.Errorf("pinning the gateway's neighbour entry: %w", err)
	}
	return waitOperUp(h, sandboxIfName, c.hostName, c.bridgeIdx)
}

// operUpTimeout bounds waitOperUp; the kernel normally gets there in a few
// milliseconds.
const operUpTimeout = 2 * time.Second

// waitOperUp waits until eth0 (through h, inside the netns), the host end
// and the bridge report operstate UP. The kernel's linkwatch work sets
// operstate and, in the same step, activates the device's queue; until then
// frames sent through it are dropped. Returning earlier would make the first
// connection to a fresh sandbox lose its SYN and wait a full second for the
// retransmit. (The bridge matters for the first port of a bridge with no
// other: the bridge itself only gets carrier then.)
func waitOperUp(h *netlink.Handle, inside, host string, bridgeIdx int) error {
	deadline := time.Now().Add(operUpTimeout)
	for {
		in, err1 := h.LinkByName(inside)
		out, err2 := netlink.LinkByName(host)
		br, err3 := netlink.LinkByIndex(bridgeIdx)
		if err := errors.Join(err1, err2, err3); err != nil {
			return fmt.Errorf("waiting for the veth pair: %w", err)
		}
		states := []netlink.LinkOperState{in.Attrs().OperState, out.Attrs().OperState, br.Attrs().OperState}
		if states[0] == netlink.OperUp && states[1] == netlink.OperUp && states[2] == netlink.OperUp {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("veth pair %s not up after %v (inside, host, bridge: %v)", host, operUpTimeout, states)
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// deleteLink removes the named link; a missing link is not an error.
func deleteLink(name string) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("looking up link %s: %w", name, err)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("deleting link %s: %w", name, err)
	}
	return nil
}
