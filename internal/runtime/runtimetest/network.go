package runtimetest

import (
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/network/nettest"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// testIsolation: two sandboxes on the same bridge cannot open connections
// to each other, while the host reaches both.
func (s *suite) testIsolation(t *testing.T) {
	b := s.newBackend(t)
	a := s.create(t, b, s.spec(NewID()))
	c := s.create(t, b, s.spec(NewID()))
	ca, cc := mustWait(t, a.IP), mustWait(t, c.IP)
	for _, tt := range []struct {
		from   *Conn
		target string
	}{
		{ca, fmt.Sprintf("%s:%d", c.IP, InitPort)},
		{cc, fmt.Sprintf("%s:%d", a.IP, InitPort)},
	} {
		// testinit sends no greeting: a reachable neighbour would answer
		// "connected ...", a blocked one "err ...".
		out := mustCall(t, tt.from, "dial "+tt.target)
		if !strings.HasPrefix(out, "err ") {
			t.Errorf("dial %s from a neighbour = %q, want a failed connection", tt.target, out)
		}
	}
}

// testEgress: a sandbox with AllowInternet reaches a server outside the
// host (a netns of the test's own, routed through the host), one without
// does not. No other address is ever contacted.
func (s *suite) testEgress(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: the outside network needs root")
	}
	outside := nettest.Outside(t)
	b := s.newBackend(t)
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprintf("AllowInternet=%v", allow), func(t *testing.T) {
			spec := s.spec(NewID())
			spec.Network.AllowInternet = allow
			inst := s.create(t, b, spec)
			out := mustCall(t, mustWait(t, inst.IP), "dial "+outside.String())
			want := "ok " + nettest.OutsideGreeting
			if allow && out != want {
				t.Fatalf("dial outside = %q, want %q", out, want)
			}
			if !allow && !strings.HasPrefix(out, "err ") {
				t.Fatalf("dial outside = %q; egress must be blocked", out)
			}
		})
	}
	s.testEgressRules(t, b, outside)
}

// testEgressRules checks allowOut/denyOut precedence at create and when
// changed live, against the test's own outside server.
func (s *suite) testEgressRules(t *testing.T, b runtime.Backend, outside netip.AddrPort) {
	host := netip.PrefixFrom(outside.Addr(), 32)
	all := netip.MustParsePrefix("0.0.0.0/0")
	other := netip.MustParsePrefix("198.51.100.0/24") // TEST-NET-2, never contacted: only listed
	cases := []struct {
		name  string
		n     netpolicy.Egress
		reach bool
	}{
		{"no internet, allowOut the server", netpolicy.Egress{AllowOut: []netip.Prefix{host}}, true},
		{"internet, denyOut the server", netpolicy.Egress{AllowInternet: true, DenyOut: []netip.Prefix{host}}, false},
		{"deny all, allow the server", netpolicy.Egress{AllowInternet: true, DenyOut: []netip.Prefix{all}, AllowOut: []netip.Prefix{host}}, true},
		{"deny all, allow another range", netpolicy.Egress{AllowInternet: true, DenyOut: []netip.Prefix{all}, AllowOut: []netip.Prefix{other}}, false},
		{"overlapping allow ranges", netpolicy.Egress{AllowOut: []netip.Prefix{host, netip.PrefixFrom(outside.Addr(), 24), all}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := NewID()
			spec := s.spec(id)
			spec.Network = tc.n
			inst := s.create(t, b, spec)
			checkReach(t, inst, outside, tc.reach)
			s.destroy(t, b, id)
		})
	}
	t.Run("changed live", func(t *testing.T) {
		id := NewID()
		spec := s.spec(id)
		spec.Network.AllowInternet = true
		inst := s.create(t, b, spec)
		checkReach(t, inst, outside, true)
		for _, step := range []struct {
			n     netpolicy.Egress
			reach bool
		}{
			{netpolicy.Egress{AllowInternet: true, DenyOut: []netip.Prefix{host}}, false},
			{netpolicy.Egress{DenyOut: []netip.Prefix{all}, AllowOut: []netip.Prefix{host}}, true},
			{netpolicy.Egress{}, false},
			{netpolicy.Egress{AllowInternet: true}, true},
		} {
			if err := b.SetNetwork(t.Context(), id, step.n); err != nil {
				t.Fatalf("SetNetwork(%+v): %v", step.n, err)
			}
			checkReach(t, inst, outside, step.reach)
		}
		s.destroy(t, b, id)
	})
}

func checkReach(t *testing.T, inst *runtime.Instance, outside netip.AddrPort, want bool) {
	t.Helper()
	c := mustWait(t, inst.IP)
	defer c.Close()
	out := mustCall(t, c, "dial "+outside.String())
	if got := out == "ok "+nettest.OutsideGreeting; got != want {
		t.Fatalf("dial %s = %q, want reachable=%v", outside, out, want)
	}
}
