package network

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// Attach gives sandbox id an address, a pinned netns with eth0 and lo up and
// a default route, and a bridge port. On error nothing is left behind.
// errdefs.ErrAlreadyExists when id is attached already.
func (m *Manager) Attach(ctx context.Context, id string, o netpolicy.Egress) (_ *Attachment, retErr error) {
	if !m.claim(id) {
		return nil, fmt.Errorf("attaching %s: %w", id, errdefs.ErrAlreadyExists)
	}
	var undo []func() error
	defer func() {
		if retErr == nil {
			return
		}
		for i := len(undo) - 1; i >= 0; i-- {
			if err := undo[i](); err != nil {
				log.G(ctx).Warn("undoing network attach", "id", id, "err", err)
			}
		}
		m.settle(id, nil)
	}()
	ip, err := m.ipam.Allocate(id)
	if err != nil {
		return nil, err
	}
	a := m.attachment(id, ip, o.AllowInternet)
	// The nftables entries go in before the port exists, so the port is
	// filtered from its first frame.
	els := sandboxElements(m.opts.Table, a.HostVeth, ip, a.AllowInternet)
	if err := addElements(els); err != nil {
		m.ipam.Release(ip)
		return nil, fmt.Errorf("registering %s: %w", ip, err)
	}
	undo = append(undo, func() error {
		// Release the address only once its entries are gone: its next
		// owner must not inherit internet access.
		if err := deleteElements(els); err != nil {
			return fmt.Errorf("unregistering %s (address stays reserved): %w", ip, err)
		}
		m.unpinNeighbor(ip)
		m.ipam.Release(ip)
		return nil
	})
	if err := createNetns(a.NetnsPath); err != nil {
		return nil, err
	}
	undo = append(undo, func() error { return deleteNetns(a.NetnsPath) })
	if err := m.plug(a); err != nil {
		return nil, err
	}
	undo = append(undo, func() error { return deleteLink(a.HostVeth) })
	if eg := o; eg.HasRules() {
		// Before the sandbox's first process: no window without its rules.
		if err := m.applyEgress(ctx, a, eg); err != nil {
			return nil, err
		}
		a.Egress, a.chain = eg, true
		undo = append(undo, func() error { return m.removeEgress(ctx, ip) })
	}
	a.Egress.AllowInternet = o.AllowInternet
	m.settle(id, a)
	cp := *a
	return &cp, nil
}

func (m *Manager) attachment(id string, ip netip.Addr, internet bool) *Attachment {
	return &Attachment{
		ID:            id,
		IP:            ip,
		Gateway:       m.ipam.Gateway(),
		Subnet:        m.opts.Subnet,
		NetnsPath:     m.NetnsPath(id),
		HostVeth:      m.HostVeth(id),
		AllowInternet: internet,
	}
}

// plug creates the veth pair for a and pins the host's neighbour entry for
// the sandbox's address.
func (m *Manager) plug(a *Attachment) error {
	ns, err := netns.GetFromPath(a.NetnsPath)
	if err != nil {
		return fmt.Errorf("opening netns %s: %w", a.NetnsPath, err)
	}
	defer ns.Close()
	if err := m.pinNeighbor(a.IP); err != nil {
		return err
	}
	return createVeth(vethConfig{
		hostName:  a.HostVeth,
		bridgeIdx: m.bridgeIdx,
		mtu:       m.opts.MTU,
		ip:        a.IP,
		prefix:    m.opts.Subnet,
		gateway:   m.ipam.Gateway(),
		ns:        ns,
	})
}

// Reconfigure re-applies eth0's address, default route and gateway entry
// inside sandbox id's netns. runsc moves eth0's address into its own
// network stack (leaving the netns without it), and reads the netns again
// when it boots or restores, so a runsc sandbox started again needs them
// back. A netns that still has them is left as it is.
func (m *Manager) Reconfigure(ctx context.Context, id string) error {
	a, ok := m.Lookup(id)
	if !ok {
		return fmt.Errorf("reconfiguring %s: not attached: %w", id, errdefs.ErrNotFound)
	}
	ns, err := netns.GetFromPath(a.NetnsPath)
	if err != nil {
		return fmt.Errorf("opening netns %s: %w", a.NetnsPath, err)
	}
	defer ns.Close()
	link, err := netlink.LinkByName(a.HostVeth)
	if err != nil {
		return fmt.Errorf("finding bridge port %s: %w", a.HostVeth, err)
	}
	return configureInside(vethConfig{
		hostName:  a.HostVeth,
		bridgeIdx: link.Attrs().MasterIndex,
		mtu:       m.opts.MTU,
		ip:        a.IP,
		prefix:    m.opts.Subnet,
		gateway:   m.ipam.Gateway(),
		ns:        ns,
	})
}

// pinNeighbor installs a permanent neighbour entry for ip on the bridge.
// eth0's MAC is derived from its address, so the host never needs ARP to
// reach a sandbox: the first connection to a new sandbox does not wait for
// (or, as observed on this kernel, sometimes lose a second to) an ARP
// exchange, and a sandbox cannot claim another's address towards the host.
func (m *Manager) pinNeighbor(ip netip.Addr) error {
	n := &netlink.Neigh{
		LinkIndex:    m.bridgeIdx,
		Family:       netlink.FAMILY_V4,
		State:        netlink.NUD_PERMANENT,
		IP:           ip.AsSlice(),
		HardwareAddr: macFor(ip),
	}
	if err := netlink.NeighSet(n); err != nil {
		return fmt.Errorf("pinning neighbour entry for %s: %w", ip, err)
	}
	return nil
}

// unpinLater removes a detached sandbox's neighbour entry after
// Manager.neighborHold (2 minutes), unless its address is handed out
// again by then (the new attach replaced the entry). The host keeps
// sending to a sandbox for a while after it is gone (TCP retransmits its
// closes for up to about 100 s). With the entry, those frames go to a MAC
// the bridge has no port for and are dropped. Without it, the host asks
// for the address by ARP, a broadcast that the bridge hands every port
// (flood flags do not apply to the bridge's own frames), waking every
// idle sandbox: after a hundred kills, 40 frames a second to each, for a
// minute.
func (m *Manager) unpinLater(ip netip.Addr) {
	time.AfterFunc(m.neighborHold, func() {
		m.ipam.IfFree(ip, func() { m.unpinNeighbor(ip) })
	})
}

// unpinNeighbor removes ip's entry; a missing one is fine.
func (m *Manager) unpinNeighbor(ip netip.Addr) {
	_ = netlink.NeighDel(&netlink.Neigh{LinkIndex: m.bridgeIdx, Family: netlink.FAMILY_V4, IP: ip.AsSlice()})
}

// Reserve re-registers a sandbox attached by an earlier warren process: it
// marks ip as id's and restores id's nftables entries (New replaced the
// tables). It is idempotent. The netns and veth are left as they are; if
// they are gone, Detach still cleans up.
func (m *Manager) Reserve(ctx context.Context, id string, ip netip.Addr, o netpolicy.Egress) (*Attachment, error) {
	allowInternet := o.AllowInternet
	if a, ok := m.Lookup(id); ok {
		if a.IP != ip {
			return nil, fmt.Errorf("reserving %s for %s: attached with %s: %w", ip, id, a.IP, errdefs.ErrConflict)
		}
		return a, nil
	}
	if !m.claim(id) {
		return nil, fmt.Errorf("reserving %s for %s: attach in progress: %w", ip, id, errdefs.ErrConflict)
	}
	if err := m.ipam.Reserve(id, ip); err != nil {
		m.settle(id, nil)
		return nil, err
	}
	a := m.attachment(id, ip, allowInternet)
	err := addElements(sandboxElements(m.opts.Table, a.HostVeth, ip, allowInternet))
	if err == nil {
		err = m.pinNeighbor(ip)
	}
	if eg := o; err == nil && eg.HasRules() {
		if err = m.applyEgress(ctx, a, eg); err == nil {
			a.Egress, a.chain = eg, true
		}
	}
	if err != nil {
		m.ipam.Release(ip)
		m.settle(id, nil)
		return nil, fmt.Errorf("registering %s: %w", ip, err)
	}
	m.settle(id, a)
	cp := *a
	return &cp, nil
}

// Detach removes sandbox id's veth, netns and nftables entries and releases
// its address. It is idempotent, and it removes the deterministic veth and
// netns names even for an id it holds no record of (a crash mid-attach).
// An address is released only once its nftables entries are gone, so a
// failed Detach can be retried and never leaks internet access to the
// address's next owner.
func (m *Manager) Detach(ctx context.Context, id string) error {
	errs := []error{
		deleteLink(m.HostVeth(id)),
		deleteNetns(m.NetnsPath(id)),
	}
	a, ok := m.Lookup(id)
	if ok {
		if a.chain {
			if err := m.removeEgress(ctx, a.IP); err != nil {
				return errors.Join(append(errs, err)...)
			}
		}
		if err := deleteElements(sandboxElements(m.opts.Table, a.HostVeth, a.IP, a.AllowInternet)); err != nil {
			return errors.Join(append(errs, fmt.Errorf("unregistering %s: %w", a.IP, err))...)
		}
		m.ipam.Release(a.IP)
		m.unpinLater(a.IP)
		m.settle(id, nil)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detaching %s: %w", id, err)
	}
	return nil
}
