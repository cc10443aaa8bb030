package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

func TestPermitted(t *testing.T) {
	t.Parallel()
	g := &Guard{
		Allow:     []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")},
		Deny:      []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")},
		HostAddrs: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("198.51.100.7")} },
	}
	for addr, want := range map[string]bool{
		"127.0.0.1": false, "::1": false, "169.254.169.254": false, "10.1.2.3": false,
		"172.17.0.1": false, "192.168.1.1": false, "100.64.0.1": false, "0.0.0.0": false,
		"::ffff:127.0.0.1": false, "fd00::1": false, "224.0.0.1": false,
		"203.0.113.5":  false, // denied: the sandboxes' subnet, say
		"198.51.100.7": false, // the host's own
		"10.20.3.4":    true,  // allowed by the operator
		"8.8.8.8":      true, "2001:4860:4860::8888": true,
	} {
		if got := g.Permitted(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Permitted(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestDialRefusesWithoutProbing: an internal address gets the same error
// whether its port is open or closed, and nothing is dialed.
func TestDialRefusesWithoutProbing(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	g := &Guard{Lookup: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	var msgs []string
	for _, addr := range []string{ln.Addr().String(), closedAddr, "registry.internal:" + port} {
		_, err := g.DialContext(context.Background(), "tcp", addr)
		if !errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Fatalf("dial %s: %v, want a refusal", addr, err)
		}
		host, _, _ := net.SplitHostPort(addr)
		msgs = append(msgs, err.Error()[len(host):])
	}
	if msgs[0] != msgs[1] || msgs[1] != msgs[2] {
		t.Errorf("the refusals differ by port or name: %q", msgs)
	}
	allowed := &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	c, err := allowed.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("an allowed range: %v", err)
	}
	c.Close()
}
