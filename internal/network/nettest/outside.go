package nettest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/warren-sandbox/warren/internal/network/linkns"
)

// OutsideGreeting is the first line the outside server sends.
const OutsideGreeting = "hello from outside"

// Outside stands in for "the internet": a netns of the test's own, linked to
// the host by a veth pair on a private /30 (host .1, outside .2), with a TCP
// server on .2 that sends OutsideGreeting and echoes one line. Sandboxes can
// only reach it by being forwarded (and NATed) by the host, which is exactly
// the path egress policy governs. The /30 is picked in 10.234.0.0/16 so it
// overlaps no host route; the address the server listens on is returned.
func Outside(t testing.TB) netip.AddrPort {
	t.Helper()
	hostIP, peerIP := pickOutsideNet(t)
	ns := outsideNetns(t, hostIP, peerIP)
	return serveIn(t, ns, peerIP.Addr())
}

// OutsideUDP is Outside with a UDP listener instead: every datagram that
// reaches it is sent, as text, on the returned channel (buffered; extra
// datagrams are dropped).
func OutsideUDP(t testing.TB) (netip.AddrPort, <-chan string) {
	t.Helper()
	hostIP, peerIP := pickOutsideNet(t)
	ns := outsideNetns(t, hostIP, peerIP)
	var pc net.PacketConn
	err := Do(ns, func() (err error) {
		pc, err = net.ListenPacket("udp4", net.JoinHostPort(peerIP.Addr().String(), "0"))
		return err
	})
	if err != nil {
		t.Fatalf("listening for UDP in outside netns: %v", err)
	}
	t.Cleanup(func() { pc.Close() })
	got := make(chan string, 16)
	go func() {
		buf := make([]byte, 1500)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			select {
			case got <- string(buf[:n]):
			default:
			}
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String()), got
}

// LinkLocalOutside is Outside on 169.254.77.0/30, a link-local range like
// the one cloud metadata services answer on (169.254.169.254, which no test
// ever contacts): sandboxes must not reach it even when allowed out.
func LinkLocalOutside(t testing.TB) netip.AddrPort {
	t.Helper()
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	p := netip.MustParsePrefix("169.254.77.0/30")
	if linkns.OverlapsRoute(p, routes) {
		t.Skipf("the host already routes %s", p)
	}
	peer := netip.MustParsePrefix("169.254.77.2/30")
	ns := outsideNetns(t, netip.MustParsePrefix("169.254.77.1/30"), peer)
	return serveIn(t, ns, peer.Addr())
}

// outsideNetns makes a netns linked to the host by a veth pair, host end
// hostIP, netns end peerIP.
func outsideNetns(t testing.TB, hostIP, peerIP netip.Prefix) netns.NsHandle {
	t.Helper()
	l, err := linkns.NewLink("", hostIP, peerIP)
	if err != nil {
		t.Fatalf("creating the outside netns: %v", err)
	}
	t.Cleanup(l.Close)
	return l.NS
}

func pickOutsideNet(t testing.TB) (host, peer netip.Prefix) {
	t.Helper()
	host, peer, err := linkns.FreeSlash30()
	if err != nil {
		t.Fatal(err)
	}
	return host, peer
}

func serveIn(t testing.TB, ns netns.NsHandle, ip netip.Addr) netip.AddrPort {
	t.Helper()
	var ln net.Listener
	err := Do(ns, func() (err error) {
		ln, err = net.Listen("tcp4", net.JoinHostPort(ip.String(), "0"))
		return err
	})
	if err != nil {
		t.Fatalf("listening in outside netns: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go greetAndEcho(c)
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

func greetAndEcho(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(c, OutsideGreeting)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err == nil {
		fmt.Fprint(c, line)
	}
}

// Token returns n random bytes in hex: tests put it in the names of the
// bridges, tables, netns files and cgroups they create, so two runs of the
// same tests on one host (two developers, CI) never share any of them.
func Token(n int) string { return randHex(n) }

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// OutsideHTTP is Outside with web servers: HTTP on port 80 and HTTPS (a
// self-signed certificate) on 443, each answering "outside <scheme> <Host>",
// and the greeting server on another port. It returns the address and the
// greeting server's port.
func OutsideHTTP(t testing.TB) (netip.Addr, netip.AddrPort) {
	t.Helper()
	hostIP, peerIP := pickOutsideNet(t)
	ns := outsideNetns(t, hostIP, peerIP)
	ip := peerIP.Addr()
	for _, port := range []string{"80", "443"} {
		var ln net.Listener
		err := Do(ns, func() (err error) {
			ln, err = net.Listen("tcp4", net.JoinHostPort(ip.String(), port))
			return err
		})
		if err != nil {
			t.Fatalf("listening on %s:%s in outside netns: %v", ip, port, err)
		}
		scheme := map[string]string{"80": "http", "443": "https"}[port]
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/bulk" { // ?mb=N: N MiB of zeros, for throughput
				var mb int
				fmt.Sscan(r.URL.Query().Get("mb"), &mb)
				buf := make([]byte, 1<<20)
				for range mb {
					if _, err := w.Write(buf); err != nil {
						return
					}
				}
				return
			}
			fmt.Fprintf(w, "outside %s %s", scheme, r.Host)
		}))
		srv.Listener = ln
		if port == "443" {
			srv.StartTLS()
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
	}
	return ip, serveIn(t, ns, ip)
}
