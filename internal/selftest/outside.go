package selftest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"sync/atomic"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// outside stands in for the internet in the egress probes: a network
// namespace of the probe's own, linked to the host by a veth pair on a /30
// in 10.234.0.0/16 that overlaps no host route, with an HTTP server on port
// 80 of its far end. Sandboxes reach it only by being forwarded by the
// host, the path egress policy governs, and nothing leaves the machine.
type outside struct {
	IP   netip.Addr
	hits atomic.Int64 // requests served
	ns   netns.NsHandle
	veth netlink.Link
	srv  *http.Server
}

func startOutside() (*outside, error) {
	host, peer, err := freeSlash30()
	if err != nil {
		return nil, err
	}
	return startOutsideAt(host, peer)
}

// linkLocalOutside is an outside server on 169.254.78.2, link-local like
// the metadata address clouds use (169.254.169.254, never contacted here),
// or nil when the host already routes that range.
func linkLocalOutside() (*outside, error) {
	host, peer := netip.MustParsePrefix("169.254.78.1/30"), netip.MustParsePrefix("169.254.78.2/30")
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, err
	}
	if overlapsRoute(host.Masked(), routes) {
		return nil, nil
	}
	return startOutsideAt(host, peer)
}

func startOutsideAt(host, peer netip.Prefix) (*outside, error) {
	var err error
	o := &outside{IP: peer.Addr()}
	if o.ns, err = newNetns(); err != nil {
		return nil, err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	veth := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("wst%x", b), Flags: net.FlagUp},
		PeerName:  "eth0", PeerNamespace: netlink.NsFd(int(o.ns)),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		o.ns.Close()
		return nil, fmt.Errorf("creating the outside veth: %w", err)
	}
	o.veth = veth
	if err := o.configure(host, peer); err != nil {
		o.Close()
		return nil, err
	}
	var ln net.Listener
	err = inNetns(o.ns, func() (err error) {
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(o.IP, 80).String())
		return err
	})
	if err != nil {
		o.Close()
		return nil, fmt.Errorf("listening in the outside netns: %w", err)
	}
	o.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		fmt.Fprintf(w, "outside %s", r.Host)
	})}
	go func() { _ = o.srv.Serve(ln) }()
	return o, nil
}

func (o *outside) configure(host, peer netip.Prefix) error {
	if err := netlink.AddrAdd(o.veth, &netlink.Addr{IPNet: ipNet(host)}); err != nil {
		return fmt.Errorf("addressing the outside veth: %w", err)
	}
	h, err := netlink.NewHandleAt(o.ns)
	if err != nil {
		return err
	}
	defer h.Close()
	far, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	if err := h.AddrAdd(far, &netlink.Addr{IPNet: ipNet(peer)}); err != nil {
		return err
	}
	return h.LinkSetUp(far)
}

// Close stops the server and removes the veth and the namespace.
func (o *outside) Close() {
	if o.srv != nil {
		_ = o.srv.Close()
	}
	if o.veth != nil {
		_ = netlink.LinkDel(o.veth)
	}
	o.ns.Close()
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}
}

// freeSlash30 picks a /30 in 10.234.0.0/16 that no host route overlaps:
// host end .1, far end .2.
func freeSlash30() (host, peer netip.Prefix, err error) {
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return host, peer, err
	}
	for range 64 {
		b := make([]byte, 2)
		_, _ = rand.Read(b)
		base := netip.AddrFrom4([4]byte{10, 234, b[0], b[1] &^ 3})
		p := netip.PrefixFrom(base, 30)
		if !overlapsRoute(p, routes) {
			return netip.PrefixFrom(base.Next(), 30), netip.PrefixFrom(base.Next().Next(), 30), nil
		}
	}
	return host, peer, errors.New("no free /30 in 10.234.0.0/16")
}

func overlapsRoute(p netip.Prefix, routes []netlink.Route) bool {
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

// newNetns makes a network namespace held only by the returned handle.
func newNetns() (netns.NsHandle, error) {
	var h netns.NsHandle
	err := onThread(func(orig netns.NsHandle) error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("creating a netns: %w", err)
		}
		var err error
		h, err = netns.Get()
		return err
	})
	return h, err
}

// inNetns runs fn on a thread inside ns; sockets it opens stay in ns.
func inNetns(ns netns.NsHandle, fn func() error) error {
	return onThread(func(netns.NsHandle) error {
		if err := netns.Set(ns); err != nil {
			return err
		}
		return fn()
	})
}

// onThread runs fn on a locked OS thread and puts the thread back in its
// original netns afterwards; a thread that cannot go back is discarded.
func onThread(fn func(orig netns.NsHandle) error) error {
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
		fnErr := fn(orig)
		if err := netns.Set(orig); err != nil {
			c <- fmt.Errorf("leaving netns: %w", err) // the thread dies locked
			return
		}
		runtime.UnlockOSThread()
		c <- fnErr
	}()
	return <-c
}
