// Package linkns makes network namespaces that stand in for "the outside
// world": a namespace held only by a file descriptor, linked to the host by
// a veth pair on a private /30, so that what a sandbox sends there crosses
// the host's forwarding path (the one egress policy governs) and never
// leaves the machine. Tests (through nettest) and `warren selftest
// isolation` both use it.
package linkns

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// New creates a network namespace that lives as long as its handle.
func New() (netns.NsHandle, error) {
	var h netns.NsHandle
	err := onThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("creating a netns: %w", err)
		}
		var err error
		h, err = netns.Get()
		return err
	})
	return h, err
}

// Do runs fn on an OS thread switched into ns. Sockets fn creates belong to
// ns for their whole life, whichever goroutine uses them afterwards.
func Do(ns netns.NsHandle, fn func() error) error {
	return onThread(func() error {
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("entering netns: %w", err)
		}
		return fn()
	})
}

// onThread runs fn on a locked OS thread and puts the thread back in its
// original netns afterwards; a thread that cannot go back dies locked.
func onThread(fn func() error) error {
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
		fnErr := fn()
		if err := netns.Set(orig); err != nil {
			c <- fmt.Errorf("leaving netns: %w", err)
			return
		}
		runtime.UnlockOSThread()
		c <- fnErr
	}()
	return <-c
}

// Link is a namespace linked to the host: the host's end of the veth pair
// has HostIP, the namespace's end ("eth0") PeerIP.
type Link struct {
	NS             netns.NsHandle
	Veth           netlink.Link
	HostIP, PeerIP netip.Prefix
}

// NewLink creates a namespace and links it to the host. name is the host
// end's interface name ("" picks one).
func NewLink(name string, host, peer netip.Prefix) (*Link, error) {
	ns, err := New()
	if err != nil {
		return nil, err
	}
	if name == "" {
		b := make([]byte, 5)
		_, _ = rand.Read(b)
		name = fmt.Sprintf("wo%x", b)
	}
	veth := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: name, Flags: net.FlagUp},
		PeerName:  "eth0", PeerNamespace: netlink.NsFd(int(ns)),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		ns.Close()
		return nil, fmt.Errorf("creating veth %s: %w", name, err)
	}
	l := &Link{NS: ns, Veth: veth, HostIP: host, PeerIP: peer}
	if err := l.address(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Link) address() error {
	if err := netlink.AddrAdd(l.Veth, &netlink.Addr{IPNet: IPNet(l.HostIP)}); err != nil {
		return fmt.Errorf("adding %s to %s: %w", l.HostIP, l.Veth.Attrs().Name, err)
	}
	h, err := netlink.NewHandleAt(l.NS)
	if err != nil {
		return err
	}
	defer h.Close()
	far, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	if err := h.AddrAdd(far, &netlink.Addr{IPNet: IPNet(l.PeerIP)}); err != nil {
		return err
	}
	return h.LinkSetUp(far)
}

// Close removes the veth pair and releases the namespace.
func (l *Link) Close() {
	_ = netlink.LinkDel(l.Veth)
	l.NS.Close()
}

// FreeSlash30 picks a random /30 in 10.234.0.0/16 that overlaps no host
// route: the host end is .1, the far end .2.
func FreeSlash30() (host, peer netip.Prefix, err error) {
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return host, peer, err
	}
	for range 64 {
		b := make([]byte, 2)
		_, _ = rand.Read(b)
		base := netip.AddrFrom4([4]byte{10, 234, b[0], b[1] &^ 3})
		if !OverlapsRoute(netip.PrefixFrom(base, 30), routes) {
			return netip.PrefixFrom(base.Next(), 30), netip.PrefixFrom(base.Next().Next(), 30), nil
		}
	}
	return host, peer, errors.New("no free /30 in 10.234.0.0/16")
}

// OverlapsRoute reports whether p overlaps a route's destination (default
// routes aside).
func OverlapsRoute(p netip.Prefix, routes []netlink.Route) bool {
	for _, r := range routes {
		if r.Dst == nil {
			continue
		}
		a, _ := netip.AddrFromSlice(r.Dst.IP)
		if ones, _ := r.Dst.Mask.Size(); ones > 0 && netip.PrefixFrom(a.Unmap(), ones).Overlaps(p) {
			return true
		}
	}
	return false
}

// IPNet converts p for netlink.
func IPNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}
}
