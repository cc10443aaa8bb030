package linkns

import (
	"net"
	"net/netip"
	"os"
	"testing"

	"github.com/vishvananda/netlink"
)

// TestLink links a namespace to the host, listens inside it and connects
// from the host; Close must remove the host's end.
func TestLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: requires root")
	}
	host, peer, err := FreeSlash30()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLink("", host, peer)
	if err != nil {
		t.Fatal(err)
	}
	name := l.Veth.Attrs().Name
	var ln net.Listener
	if err := Do(l.NS, func() (err error) {
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(peer.Addr(), 0).String())
		return err
	}); err != nil {
		l.Close()
		t.Fatal(err)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			_, _ = c.Write([]byte("x"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatalf("dialling into the linked netns: %v", err)
	}
	buf := make([]byte, 1)
	if _, err := c.Read(buf); err != nil || buf[0] != 'x' {
		t.Fatalf("read %q, %v", buf, err)
	}
	c.Close()
	ln.Close()
	l.Close()
	if _, err := netlink.LinkByName(name); err == nil {
		t.Fatalf("veth %s left after Close", name)
	}
	routes, _ := netlink.RouteList(nil, netlink.FAMILY_V4)
	if OverlapsRoute(host.Masked(), routes) {
		t.Fatalf("a route to %s left after Close", host.Masked())
	}
}
