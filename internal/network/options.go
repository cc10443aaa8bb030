package network

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Defaults for the zero fields of Options.
const (
	DefaultBridge   = "warren0"
	DefaultTable    = "warren"
	DefaultNetnsDir = "/run/netns"
	DefaultMTU      = 1500
)

// DefaultSubnet is the sandbox address range when Options.Subnet is unset.
var DefaultSubnet = netip.MustParsePrefix("10.99.0.0/16")

// Options configure a Manager. The zero value is valid and yields the
// production defaults; tests pass a bridge, table, subnet and netns prefix of
// their own so they never disturb a running warren.
type Options struct {
	// Bridge is the host bridge's name (at most 15 bytes).
	Bridge string
	// Subnet is the sandbox range. The first address is the gateway on the
	// bridge; it must not overlap any host route.
	Subnet netip.Prefix
	// Table names the nftables tables (family inet and bridge) the manager
	// owns and replaces wholesale at startup.
	Table string
	// NetnsDir holds the netns bind mounts. It is made a shared mount point,
	// as iproute2 does, so removing a netns propagates to every mount
	// namespace that copied it.
	NetnsDir string
	// NetnsPrefix is prepended to the sandbox id to name its netns file
	// (default: the bridge name and "-").
	NetnsPrefix string
	// MTU of the bridge and veth pairs.
	MTU int
	// ProxyPort, when set, is where the egress proxy listens on the
	// gateway: sandboxes with allowOut domains have their otherwise denied
	// HTTP(S) connections redirected there (internal/egressproxy).
	ProxyPort int
	// DNSUpstream, when set (host:port), is the resolver warren relays the
	// sandboxes' DNS queries to from the gateway's port 53, and resolves
	// allowed domains with.
	DNSUpstream string
	// EgressAllow are internal ranges (private, loopback…) the egress
	// proxy may still connect to for an allowed domain (--egress-allow).
	EgressAllow []netip.Prefix
	// Lookup, when set, resolves allowed domains for the proxy instead
	// (tests).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

// withDefaults returns o with zero fields filled in, or an
// errdefs.ErrInvalidArgument error when a field cannot work.
func (o Options) withDefaults() (Options, error) {
	if o.Bridge == "" {
		o.Bridge = DefaultBridge
	}
	if !o.Subnet.IsValid() {
		o.Subnet = DefaultSubnet
	}
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if o.NetnsDir == "" {
		o.NetnsDir = DefaultNetnsDir
	}
	if o.NetnsPrefix == "" {
		// Named after the bridge, which is this server's alone: Sweep
		// removes the netns files with its prefix that it does not know,
		// and must never take another server's.
		o.NetnsPrefix = o.Bridge + "-"
	}
	if o.MTU == 0 {
		o.MTU = DefaultMTU
	}
	return o, o.validate()
}

func (o Options) validate() error {
	if len(o.Bridge) > 15 || !nameRE.MatchString(o.Bridge) {
		return fmt.Errorf("bridge name %q: %w", o.Bridge, errdefs.ErrInvalidArgument)
	}
	if !nameRE.MatchString(o.Table) {
		return fmt.Errorf("nftables table name %q: %w", o.Table, errdefs.ErrInvalidArgument)
	}
	if !nameRE.MatchString(o.NetnsPrefix) {
		return fmt.Errorf("netns prefix %q: %w", o.NetnsPrefix, errdefs.ErrInvalidArgument)
	}
	// IPv4 only: sandboxes get one IPv4 address; a /30 is the smallest range
	// with a gateway and one sandbox, a /8 the largest we keep in memory.
	if !o.Subnet.Addr().Is4() || o.Subnet.Bits() < 8 || o.Subnet.Bits() > 30 {
		return fmt.Errorf("subnet %s: want an IPv4 prefix between /8 and /30: %w", o.Subnet, errdefs.ErrInvalidArgument)
	}
	if o.Subnet != o.Subnet.Masked() {
		return fmt.Errorf("subnet %s has host bits set (want %s): %w", o.Subnet, o.Subnet.Masked(), errdefs.ErrInvalidArgument)
	}
	if o.MTU < 576 || o.MTU > 65535 {
		return fmt.Errorf("mtu %d: %w", o.MTU, errdefs.ErrInvalidArgument)
	}
	return nil
}
