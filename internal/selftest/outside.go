package selftest

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"

	"github.com/vishvananda/netlink"

	"github.com/warren-sandbox/warren/internal/network/linkns"
)

// outside stands in for the internet in the egress probes: a network
// namespace of the probe's own, linked to the host (linkns), with an HTTP
// server on port 80 of its far end that counts the requests it serves.
// Sandboxes reach it only by being forwarded by the host, the path egress
// policy governs, and nothing leaves the machine.
type outside struct {
	IP   netip.Addr
	hits atomic.Int64
	link *linkns.Link
	srv  *http.Server
}

func startOutside() (*outside, error) {
	host, peer, err := linkns.FreeSlash30()
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
	if linkns.OverlapsRoute(host.Masked(), routes) {
		return nil, nil
	}
	return startOutsideAt(host, peer)
}

func startOutsideAt(host, peer netip.Prefix) (*outside, error) {
	link, err := linkns.NewLink("", host, peer)
	if err != nil {
		return nil, fmt.Errorf("linking the outside netns: %w", err)
	}
	o := &outside{IP: peer.Addr(), link: link}
	var ln net.Listener
	err = linkns.Do(link.NS, func() (err error) {
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(o.IP, 80).String())
		return err
	})
	if err != nil {
		link.Close()
		return nil, fmt.Errorf("listening in the outside netns: %w", err)
	}
	o.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		fmt.Fprintf(w, "outside %s", r.Host)
	})}
	go func() { _ = o.srv.Serve(ln) }()
	return o, nil
}

// Close stops the server and removes the link and the namespace.
func (o *outside) Close() {
	_ = o.srv.Close()
	o.link.Close()
}
