package network

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"path/filepath"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// Manager owns the host bridge, the address pool and the nftables tables,
// and attaches sandboxes to them. It is safe for concurrent use.
type Manager struct {
	opts      Options
	ipam      *IPAM
	bridgeIdx int

	mu       sync.Mutex             // mu protects attached.
	attached map[string]*Attachment // by sandbox id; nil value = attach in progress

	neighborHold time.Duration // see unpinLater

	closers []io.Closer // the egress proxy's and DNS relay's listeners
}

// Attachment is one sandbox's place on the network.
type Attachment struct {
	ID            string
	IP            netip.Addr   // eth0's address inside the netns
	Gateway       netip.Addr   // the bridge's address, the default route
	Subnet        netip.Prefix // the sandbox range
	NetnsPath     string       // the pinned netns, for the OCI spec
	HostVeth      string       // the bridge port
	AllowInternet bool
	Egress        netpolicy.Egress // the rules applied; AllowInternet mirrors the field above
	chain         bool             // an egress chain and map entry exist for IP
}

// New sets up (or re-adopts) the host side: it refuses a subnet overlapping
// a host route, ensures the bridge with the gateway address, enables IPv4
// forwarding, makes the netns dir a shared mount and (re)loads the nftables
// tables. Sandboxes from an earlier run must then be re-registered with
// Reserve.
func New(ctx context.Context, opts Options) (*Manager, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ipam, err := NewIPAM(opts.Subnet)
	if err != nil {
		return nil, err
	}
	ignore := 0
	if br, err := netlink.LinkByName(opts.Bridge); err == nil {
		ignore = br.Attrs().Index // our own bridge from an earlier run
	}
	if err := checkNoOverlap(opts.Subnet, ignore); err != nil {
		return nil, err
	}
	gw := netip.PrefixFrom(ipam.Gateway(), opts.Subnet.Bits())
	br, err := ensureBridge(opts.Bridge, gw, opts.MTU)
	if err != nil {
		return nil, err
	}
	if err := writeSysctl("net/ipv4/ip_forward", "1"); err != nil {
		return nil, err
	}
	if err := ensureNetnsDir(opts.NetnsDir); err != nil {
		return nil, err
	}
	rd := rulesetData{Table: opts.Table, Bridge: opts.Bridge, Subnet: opts.Subnet, Gateway: ipam.Gateway(), DNS: opts.DNSUpstream != "", ProxyPort: opts.ProxyPort}
	if err := loadRuleset(rd); err != nil {
		return nil, err
	}
	log.G(ctx).Debug("network ready", "bridge", opts.Bridge, "subnet", opts.Subnet, "table", opts.Table)
	m := &Manager{
		opts:      opts,
		ipam:      ipam,
		bridgeIdx: br.Attrs().Index,
		attached:  make(map[string]*Attachment),

		neighborHold: 2 * time.Minute,
	}
	if err := m.startServices(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// Options returns the manager's options, defaults filled in.
func (m *Manager) Options() Options { return m.opts }

// Bridge is the host bridge's name.
func (m *Manager) Bridge() string { return m.opts.Bridge }

// Subnet is the sandbox address range.
func (m *Manager) Subnet() netip.Prefix { return m.opts.Subnet }

// Gateway is the bridge's address.
func (m *Manager) Gateway() netip.Addr { return m.ipam.Gateway() }

// NetnsPath is where sandbox id's netns is pinned.
func (m *Manager) NetnsPath(id string) string {
	return filepath.Join(m.opts.NetnsDir, m.opts.NetnsPrefix+id)
}

// HostVeth is the name of sandbox id's bridge port.
func (m *Manager) HostVeth(id string) string { return hostVethName(m.opts.Bridge, id) }

// Lookup returns sandbox id's attachment, if it is attached.
func (m *Manager) Lookup(id string) (*Attachment, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.attached[id]
	if a == nil {
		return nil, false
	}
	cp := *a
	return &cp, true
}

// Teardown removes the nftables tables and the bridge. The server does not
// call it on shutdown (running sandboxes keep their network across a
// restart); tests and uninstall do. Attached sandboxes lose connectivity.
func (m *Manager) Teardown(ctx context.Context) error {
	return errors.Join(deleteRuleset(m.opts.Table), deleteBridge(m.opts.Bridge))
}

// claim registers id as being attached; false when it already is.
func (m *Manager) claim(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.attached[id]; ok {
		return false
	}
	m.attached[id] = nil
	return true
}

func (m *Manager) settle(id string, a *Attachment) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a == nil {
		delete(m.attached, id)
		return
	}
	m.attached[id] = a
}
