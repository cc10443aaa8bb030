// Package netguard decides which addresses the server itself may connect
// to on a user's behalf (registry pulls, their token realms and
// redirects): never the host's own services, its loopback, link-local,
// private and shared ranges, or the sandboxes' subnet, unless the operator
// allows a range. A refused host gets one error whatever its port, so a
// user cannot use warren to tell open ports from closed ones.
package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// internal are ranges a user's request must not make the server reach.
var internal = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("224.0.0.0/3"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

// Guard is an address policy with a dialer that keeps it.
type Guard struct {
	// Allow lifts the refusal for these ranges (--registry-allow).
	Allow []netip.Prefix
	// Deny adds ranges, such as the sandboxes' subnet.
	Deny []netip.Prefix
	// HostAddrs lists the host's own addresses; nil reads the interfaces.
	HostAddrs func() []netip.Addr
	// Lookup resolves a name; nil uses the default resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Permitted reports whether the server may connect to a.
func (g *Guard) Permitted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range g.Allow {
		if p.Contains(a) {
			return true
		}
	}
	in := func(ps []netip.Prefix) bool {
		return slices.ContainsFunc(ps, func(p netip.Prefix) bool { return p.Contains(a) })
	}
	if in(internal) || in(g.Deny) {
		return false
	}
	return !slices.Contains(g.hostAddrs(), a)
}

func (g *Guard) hostAddrs() []netip.Addr {
	if g.HostAddrs != nil {
		return g.HostAddrs()
	}
	var out []netip.Addr
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// DialContext dials addr if its host resolves to a permitted address,
// trying those in turn; otherwise it fails without dialing anything.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if _, err := strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("port %q: %w", port, err)
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var permitted []netip.Addr
	for _, a := range addrs {
		if g.Permitted(a) {
			permitted = append(permitted, a.Unmap())
		}
	}
	if len(permitted) == 0 {
		return nil, errdefs.New(errdefs.ErrPermissionDenied, fmt.Sprintf(
			"%s is an internal address (loopback, private, link-local, the host's or the sandboxes'); the server does not connect to it for users unless the operator allows its range", host))
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	var lastErr error
	for _, a := range permitted {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if g.Lookup != nil {
		return g.Lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}
