package network

import (
	"fmt"
	"net/netip"
	"sync"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// IPAM hands out the host addresses of one IPv4 subnet. The first address
// after the network address is the gateway and is never handed out, nor are
// the network and broadcast addresses.
//
// Allocation is next-fit: it continues after the last address handed out
// instead of reusing the lowest free one, so an address that was just
// released (and may still sit in a neighbour cache or a client's connection
// pool) is reused as late as possible.
type IPAM struct {
	prefix  netip.Prefix
	gateway netip.Addr
	last    netip.Addr // broadcast address, excluded

	mu   sync.Mutex            // mu protects used and next.
	used map[netip.Addr]string // address -> owner id
	next netip.Addr            // where the next search starts
}

// NewIPAM returns an allocator for the IPv4 prefix p (masked, /8 to /30).
func NewIPAM(p netip.Prefix) (*IPAM, error) {
	if !p.Addr().Is4() || p.Bits() < 8 || p.Bits() > 30 || p != p.Masked() {
		return nil, fmt.Errorf("ipam subnet %s: %w", p, errdefs.ErrInvalidArgument)
	}
	gw := p.Addr().Next()
	return &IPAM{
		prefix:  p,
		gateway: gw,
		last:    broadcast(p),
		used:    make(map[netip.Addr]string),
		next:    gw.Next(),
	}, nil
}

// Gateway is the subnet's gateway address (the bridge's address).
func (a *IPAM) Gateway() netip.Addr { return a.gateway }

// Prefix is the subnet.
func (a *IPAM) Prefix() netip.Prefix { return a.prefix }

// Allocate hands a free address to owner. errdefs.ErrResourceExhausted when
// the subnet is full.
func (a *IPAM) Allocate(owner string) (netip.Addr, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ip := a.next
	for range a.size() {
		if _, taken := a.used[ip]; !taken {
			a.used[ip] = owner
			a.next = a.wrap(ip.Next())
			return ip, nil
		}
		ip = a.wrap(ip.Next())
	}
	return netip.Addr{}, fmt.Errorf("allocating an address in %s: all %d in use: %w", a.prefix, a.size(), errdefs.ErrResourceExhausted)
}

// Reserve marks ip as owner's, for re-adopting a sandbox after a restart. It
// is idempotent for the same owner; errdefs.ErrConflict when another owner
// holds ip, errdefs.ErrInvalidArgument when ip is not a host address of the
// subnet.
func (a *IPAM) Reserve(owner string, ip netip.Addr) error {
	if !a.assignable(ip) {
		return fmt.Errorf("reserving %s: not a sandbox address of %s: %w", ip, a.prefix, errdefs.ErrInvalidArgument)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, taken := a.used[ip]; taken && cur != owner {
		return fmt.Errorf("reserving %s for %s: held by %s: %w", ip, owner, cur, errdefs.ErrConflict)
	}
	a.used[ip] = owner
	return nil
}

// Release frees ip. Releasing a free address is a no-op.
func (a *IPAM) Release(ip netip.Addr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.used, ip)
}

// IfFree runs fn while ip is free, holding the allocator so that no
// Allocate hands ip out meanwhile; it reports whether fn ran.
func (a *IPAM) IfFree(ip netip.Addr, fn func()) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, taken := a.used[ip]; taken {
		return false
	}
	fn()
	return true
}

// Owner reports who holds ip.
func (a *IPAM) Owner(ip netip.Addr) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	owner, ok := a.used[ip]
	return owner, ok
}

// InUse is the number of addresses handed out.
func (a *IPAM) InUse() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.used)
}

// size is the number of assignable addresses: all but network, gateway and
// broadcast.
func (a *IPAM) size() int { return 1<<(32-a.prefix.Bits()) - 3 }

func (a *IPAM) assignable(ip netip.Addr) bool {
	return a.prefix.Contains(ip) && ip != a.prefix.Addr() && ip != a.gateway && ip != a.last
}

// wrap maps the broadcast address back to the first assignable one.
func (a *IPAM) wrap(ip netip.Addr) netip.Addr {
	if !a.assignable(ip) {
		return a.gateway.Next()
	}
	return ip
}

// broadcast returns the last address of the IPv4 prefix p.
func broadcast(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
