package network

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/network/nettest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestPortHearsOnlyItsOwnTraffic: a sandbox's bridge port is isolated,
// floods nothing and learns nothing, its MAC has a static forwarding
// entry, and the host's first connection to one sandbox (a MAC the bridge
// never saw a frame from) sends no frame to another sandbox's port.
func TestPortHearsOnlyItsOwnTraffic(t *testing.T) {
	m := newTestManager(t)
	a := attach(t, m, "a", false)
	attach(t, m, "b", false) // only its port is looked at
	portA, portB := hostVethName(m.opts.Bridge, "a"), hostVethName(m.opts.Bridge, "b")
	want := map[string]string{"isolated": "1", "learning": "0", "unicast_flood": "0", "multicast_flood": "0", "broadcast_flood": "0"}
	for _, port := range []string{portA, portB} {
		if v, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + port + "/disable_ipv6"); err == nil && strings.TrimSpace(string(v)) != "1" {
			t.Errorf("%s: IPv6 is on", port)
		}
		for flag, v := range want {
			got, err := os.ReadFile(filepath.Join("/sys/class/net", port, "brport", flag))
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(got)) != v {
				t.Errorf("%s: %s = %s, want %s", port, flag, strings.TrimSpace(string(got)), v)
			}
		}
	}
	link, err := netlink.LinkByName(portA)
	if err != nil {
		t.Fatal(err)
	}
	fdb, err := netlink.NeighList(link.Attrs().Index, unix.AF_BRIDGE)
	if err != nil {
		t.Fatal(err)
	}
	static := false
	for _, n := range fdb {
		if n.HardwareAddr.String() == macFor(a.IP).String() && n.State&netlink.NUD_NOARP != 0 {
			static = true
		}
	}
	if !static {
		t.Errorf("no static forwarding entry for %s on %s: %+v", macFor(a.IP), portA, fdb)
	}

	frames := countFrames(t, portB, macFor(a.IP), func() {
		at := nettest.GreetIn(t, a.NetnsPath, a.IP, "a")
		if got, err := nettest.DialFrom("", at, connectTimeout); err != nil || got != "a" {
			t.Errorf("host to a: %q, %v", got, err)
		}
	})
	if frames != 0 {
		t.Errorf("b's port carried %d frames while the host talked to a", frames)
	}
}

// countFrames counts the frames for dst (or broadcast) that leave the host
// through port, towards its sandbox, while fn runs. Frames the port's own
// device sends are not counted: they are not another sandbox's traffic.
func countFrames(t *testing.T, port string, dst net.HardwareAddr, fn func()) int {
	t.Helper()
	link, err := netlink.LinkByName(port)
	if err != nil {
		t.Fatal(err)
	}
	proto := uint16(unix.ETH_P_ALL<<8&0xff00 | unix.ETH_P_ALL>>8)
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: link.Attrs().Index}); err != nil {
		t.Fatal(err)
	}
	tv := unix.NsecToTimeval((100 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	fn()
	n := 0
	buf := make([]byte, 2048)
	for {
		k, from, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return n // timed out: nothing more queued
		}
		ll, ok := from.(*unix.SockaddrLinklayer)
		if !ok || ll.Pkttype != unix.PACKET_OUTGOING || k < 6 {
			continue
		}
		if to := net.HardwareAddr(buf[:6]); bytes.Equal(to, dst) || bytes.Equal(to, broadcastMAC) {
			n++
		}
	}
}

var broadcastMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// TestDetachedAddressStaysQuiet: traffic the host still sends to a
// detached sandbox's address (a close retransmitted, say) reaches no other
// sandbox's port: no ARP broadcast asks for the address while its
// neighbour entry is held, and the entry goes after the hold.
func TestDetachedAddressStaysQuiet(t *testing.T) {
	m := newTestManager(t)
	m.neighborHold = time.Second
	a := attach(t, m, "a", false)
	attach(t, m, "b", false)
	if err := m.Detach(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	send := func() {
		c, err := net.Dial("udp4", net.JoinHostPort(a.IP.String(), "9"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for range 3 {
			_, _ = c.Write([]byte("still there?"))
			time.Sleep(50 * time.Millisecond)
		}
	}
	portB := hostVethName(m.opts.Bridge, "b")
	if n := countFrames(t, portB, macFor(a.IP), send); n != 0 {
		t.Errorf("b's port carried %d frames for a's old address", n)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		ns, err := netlink.NeighList(m.bridgeIdx, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, n := range ns {
			if n.IP.Equal(a.IP.AsSlice()) && n.State&netlink.NUD_PERMANENT != 0 {
				return fmt.Errorf("a's neighbour entry is still pinned")
			}
		}
		return nil
	})
}
