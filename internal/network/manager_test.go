package network

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/network/nettest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// testOptions uses names of this package's own and a free range, so the
// tests never touch a running warren's bridge, table or netns files, nor
// those of other tests running at the same time.
func testOptions(t testing.TB) Options {
	return Options{
		Bridge:      "wrnn" + testToken,
		Subnet:      nettest.FreeSubnet(t, netip.MustParsePrefix("10.160.0.0/11"), 24),
		Table:       "wrnnettest" + testToken,
		NetnsPrefix: "wrnn" + testToken + "-",
	}
}

// testToken makes this test binary's names unique on the host.
var testToken = nettest.Token(3)

func newTestManager(t *testing.T) *Manager {
	t.Helper()
	testutil.RequiresRoot(t)
	return newTestManagerWith(t, testOptions(t))
}

func newTestManagerWith(t *testing.T, o Options) *Manager {
	t.Helper()
	testutil.RequiresRoot(t)
	t.Cleanup(func() {
		// Not m.Teardown: New may have failed half-way.
		err := errors.Join(deleteRuleset(o.Table), deleteBridge(o.Bridge))
		if err != nil {
			t.Errorf("teardown: %v", err)
		}
	})
	m, err := New(t.Context(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func attach(t *testing.T, m *Manager, id string, internet bool) *Attachment {
	t.Helper()
	a, err := m.Attach(t.Context(), id, netpolicy.Egress{AllowInternet: internet})
	if err != nil {
		t.Fatalf("Attach(%s): %v", id, err)
	}
	t.Cleanup(func() { _ = m.Detach(context.Background(), id) })
	return a
}

// dialTimeout bounds connections that must fail; those that must work get
// connectTimeout, so a loaded host does not fail the test, but a slow one
// (a lost SYN costs a 1 s retransmit) is logged.
const (
	dialTimeout    = 700 * time.Millisecond
	connectTimeout = 5 * time.Second
)

func TestAttachIsolationAndEgress(t *testing.T) {
	m := newTestManager(t)
	outside := nettest.Outside(t)
	a := attach(t, m, "a", true)
	b := attach(t, m, "b", false)
	atA := nettest.GreetIn(t, a.NetnsPath, a.IP, "a")
	atB := nettest.GreetIn(t, b.NetnsPath, b.IP, "b")
	atHost := nettest.GreetIn(t, "", m.Gateway(), "host")

	tests := []struct {
		name string
		from string // netns path, "" for the host
		to   netip.AddrPort
		want string // greeting, "" when the connection must fail
	}{
		{"host reaches a", "", atA, "a"},
		{"host reaches b", "", atB, "b"},
		{"a cannot reach b", a.NetnsPath, atB, ""},
		{"b cannot reach a", b.NetnsPath, atA, ""},
		{"a cannot open connections to the host", a.NetnsPath, atHost, ""},
		{"a with internet reaches outside", a.NetnsPath, outside, nettest.OutsideGreeting},
		{"b without internet cannot reach outside", b.NetnsPath, outside, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := dialTimeout
			if tt.want != "" {
				timeout = connectTimeout
			}
			start := time.Now()
			got, err := nettest.DialFrom(tt.from, tt.to, timeout)
			if took := time.Since(start); tt.want != "" && took > 500*time.Millisecond {
				t.Logf("connecting took %v", took)
			}
			if tt.want == "" && err == nil {
				t.Fatalf("connected to %s and read %q, want no connection", tt.to, got)
			}
			if tt.want != "" && (err != nil || got != tt.want) {
				t.Fatalf("dial %s = %q, %v; want %q", tt.to, got, err, tt.want)
			}
		})
	}
}

func TestDetachFreesEverything(t *testing.T) {
	m := newTestManager(t)
	a := attach(t, m, "gone", false)
	if err := m.Detach(t.Context(), a.ID); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	assertDetached(t, m, a)
	if err := m.Detach(t.Context(), a.ID); err != nil {
		t.Fatalf("second Detach: %v", err)
	}
}

// TestEgressRulesFollowTheAddress: a sandbox's allow/deny rules survive a
// restart (Reserve) and go with Detach, so the address's next owner does
// not inherit them.
func TestEgressRulesFollowTheAddress(t *testing.T) {
	m := newTestManager(t)
	outside := nettest.Outside(t)
	deny := []netip.Prefix{netip.PrefixFrom(outside.Addr(), 32)}
	a, err := m.Attach(t.Context(), "ruled", netpolicy.Egress{AllowInternet: true, DenyOut: deny})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nettest.DialFrom(a.NetnsPath, outside, dialTimeout); err == nil {
		t.Fatal("denied destination reached")
	}
	m2, err := New(t.Context(), m.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Reserve(t.Context(), a.ID, a.IP, netpolicy.Egress{AllowInternet: true, DenyOut: deny}); err != nil {
		t.Fatal(err)
	}
	if _, err := nettest.DialFrom(a.NetnsPath, outside, dialTimeout); err == nil {
		t.Fatal("denied destination reached after a restart")
	}
	if err := m2.Detach(t.Context(), a.ID); err != nil {
		t.Fatal(err)
	}
	if chainExists(t, m2.opts.Table, egressChain(a.IP)) {
		t.Fatalf("egress chain of %s left after Detach", a.IP)
	}
	b, err := m2.Attach(t.Context(), "next", netpolicy.Egress{AllowInternet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Detach(t.Context(), b.ID)
	if b.IP == a.IP {
		if got, err := nettest.DialFrom(b.NetnsPath, outside, connectTimeout); err != nil || got != nettest.OutsideGreeting {
			t.Fatalf("the address's next owner inherited its rules: %q, %v", got, err)
		}
	}
}

// TestNoSpoofing: a sandbox that takes a neighbour's address as its own
// (root inside can add addresses) cannot send with it: the bridge drops
// frames whose port, MAC and IP do not match the sandbox's identity. A UDP
// server outside the host records what arrives; the control datagram sent
// with the sandbox's own address must arrive, the spoofed one must not.
func TestNoSpoofing(t *testing.T) {
	m := newTestManager(t)
	outside, got := nettest.OutsideUDP(t)
	a := attach(t, m, "spoofer", true)
	b := attach(t, m, "victim", true)
	send := func(src netip.Addr, payload string) error {
		return nettest.DoPath(a.NetnsPath, func() error {
			c, err := net.DialUDP("udp4", &net.UDPAddr{IP: src.AsSlice()}, net.UDPAddrFromAddrPort(outside))
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Write([]byte(payload))
			return err
		})
	}
	err := nettest.DoPath(a.NetnsPath, func() error {
		eth, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		return netlink.AddrAdd(eth, &netlink.Addr{IPNet: &net.IPNet{IP: b.IP.AsSlice(), Mask: net.CIDRMask(32, 32)}})
	})
	if err != nil {
		t.Fatalf("adding the neighbour's address inside: %v", err)
	}
	for _, p := range []struct {
		src     netip.Addr
		payload string
	}{{b.IP, "spoofed"}, {a.IP, "control"}} {
		if err := send(p.src, p.payload); err != nil {
			t.Fatalf("sending as %s: %v", p.src, err)
		}
	}
	select {
	case msg := <-got:
		if msg != "control" {
			t.Fatalf("the outside server received %q first: a spoofed datagram got through", msg)
		}
	case <-time.After(connectTimeout):
		t.Fatal("control datagram never arrived")
	}
	select {
	case msg := <-got:
		t.Fatalf("the outside server also received %q", msg)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestLinkLocalBlocked: a sandbox with internet access and an allowOut
// naming a link-local server still cannot reach it; the host can.
func TestLinkLocalBlocked(t *testing.T) {
	m := newTestManager(t)
	ll := nettest.LinkLocalOutside(t)
	if got, err := nettest.DialFrom("", ll, connectTimeout); err != nil || got != nettest.OutsideGreeting {
		t.Fatalf("control: the host cannot reach %s: %q, %v", ll, got, err)
	}
	a, err := m.Attach(t.Context(), "ll", netpolicy.Egress{AllowInternet: true, AllowOut: []netip.Prefix{netip.PrefixFrom(ll.Addr(), 32)}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Detach(t.Context(), a.ID)
	if got, err := nettest.DialFrom(a.NetnsPath, ll, dialTimeout); err == nil {
		t.Fatalf("sandbox reached link-local %s: %q", ll, got)
	}
}

func assertDetached(t *testing.T, m *Manager, a *Attachment) {
	t.Helper()
	if _, err := os.Stat(a.NetnsPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("netns file %s still there: %v", a.NetnsPath, err)
	}
	if _, err := netlink.LinkByName(a.HostVeth); err == nil {
		t.Errorf("veth %s still there", a.HostVeth)
	}
	if owner, held := m.ipam.Owner(a.IP); held {
		t.Errorf("%s still held by %s", a.IP, owner)
	}
	if _, ok := m.Lookup(a.ID); ok {
		t.Errorf("%s still recorded as attached", a.ID)
	}
}

func TestAttachTwiceIsAlreadyExists(t *testing.T) {
	m := newTestManager(t)
	attach(t, m, "twice", false)
	if _, err := m.Attach(t.Context(), "twice", netpolicy.Egress{}); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("second Attach = %v, want ErrAlreadyExists", err)
	}
}

func TestFailedAttachLeavesNothing(t *testing.T) {
	m := newTestManager(t)
	// Occupy the host veth name so the veth step fails after the address
	// and the netns were made.
	squatter := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: m.HostVeth("fails")}}
	if err := netlink.LinkAdd(squatter); err != nil {
		t.Fatal(err)
	}
	defer netlink.LinkDel(squatter)
	if _, err := m.Attach(t.Context(), "fails", netpolicy.Egress{}); err == nil {
		t.Fatal("Attach succeeded despite the name clash")
	}
	if _, err := os.Stat(m.NetnsPath("fails")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("netns file left behind: %v", err)
	}
	if n := m.ipam.InUse(); n != 0 {
		t.Errorf("%d addresses still in use", n)
	}
	if _, ok := m.Lookup("fails"); ok {
		t.Error("failed attach recorded")
	}
}

func TestRestartReadoptsWithReserve(t *testing.T) {
	m := newTestManager(t)
	outside := nettest.Outside(t)
	a := attach(t, m, "survivor", true)
	atA := nettest.GreetIn(t, a.NetnsPath, a.IP, "a")

	m2, err := New(t.Context(), m.opts) // a restarted warren
	if err != nil {
		t.Fatalf("New over existing state: %v", err)
	}
	if _, err := nettest.DialFrom(a.NetnsPath, outside, dialTimeout); err == nil {
		t.Fatal("egress allowed before the address was re-reserved")
	}
	if _, err := m2.Reserve(t.Context(), a.ID, a.IP, netpolicy.Egress{AllowInternet: true}); err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if _, err := m2.Reserve(t.Context(), a.ID, a.IP, netpolicy.Egress{AllowInternet: true}); err != nil {
		t.Fatalf("Reserve again: %v", err)
	}
	if got, err := nettest.DialFrom(a.NetnsPath, outside, connectTimeout); err != nil || got != nettest.OutsideGreeting {
		t.Fatalf("egress after Reserve: %q, %v", got, err)
	}
	if got, err := nettest.DialFrom("", atA, connectTimeout); err != nil || got != "a" {
		t.Fatalf("host to sandbox after restart: %q, %v", got, err)
	}
	if ip, err := m2.Attach(t.Context(), "other", netpolicy.Egress{}); err != nil || ip.IP == a.IP {
		t.Fatalf("Attach after Reserve = %v, %v; must not reuse %s", ip, err, a.IP)
	}
	for _, id := range []string{a.ID, "other"} {
		if err := m2.Detach(t.Context(), id); err != nil {
			t.Fatalf("Detach %s: %v", id, err)
		}
	}
	assertDetached(t, m2, a)
}

func TestNewRefusesOverlappingSubnet(t *testing.T) {
	testutil.RequiresRoot(t)
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if r.Dst == nil {
			continue
		}
		ones, _ := r.Dst.Mask.Size()
		if ones < 8 || ones > 30 {
			continue
		}
		addr, _ := netip.AddrFromSlice(r.Dst.IP)
		o := testOptions(t)
		o.Subnet = netip.PrefixFrom(addr.Unmap(), ones).Masked()
		if _, err := New(t.Context(), o); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Fatalf("New with subnet %s (a host route) = %v, want ErrInvalidArgument", o.Subnet, err)
		}
		if _, err := netlink.LinkByName(o.Bridge); err == nil {
			t.Fatal("bridge created despite the refusal")
		}
		return
	}
	t.Skip("no suitable host route to collide with")
}

func TestSweepRemovesUnclaimedState(t *testing.T) {
	m := newTestManager(t)
	kept := attach(t, m, "kept", false)
	stray, err := m.Attach(t.Context(), "stray", netpolicy.Egress{})
	if err != nil {
		t.Fatal(err)
	}
	m.settle("stray", nil) // forget it, as a crashed warren would
	removed, err := m.Sweep(t.Context())
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if len(removed) != 2 {
		t.Fatalf("Sweep removed %v, want the stray netns and link", removed)
	}
	if _, err := os.Stat(stray.NetnsPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stray netns still there")
	}
	if _, err := netlink.LinkByName(stray.HostVeth); err == nil {
		t.Errorf("stray link still there")
	}
	if _, err := os.Stat(kept.NetnsPath); err != nil {
		t.Errorf("attached sandbox's netns swept: %v", err)
	}
	if _, err := netlink.LinkByName(kept.HostVeth); err != nil {
		t.Errorf("attached sandbox's link swept: %v", err)
	}
	m.ipam.Release(stray.IP)
	_ = deleteElements(sandboxElements(m.opts.Table, stray.HostVeth, stray.IP, false))
}

// chainExists reports whether the inet table has the named chain.
func chainExists(t *testing.T, table, name string) bool {
	t.Helper()
	c, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	inet, _ := tables(table)
	_, err = c.ListChain(inet, name)
	return err == nil
}
