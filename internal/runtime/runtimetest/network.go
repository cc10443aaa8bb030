package runtimetest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/network/nettest"
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
}
