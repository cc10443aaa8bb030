package network

import (
	"context"
	"fmt"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"net/netip"
	"strings"

	"github.com/google/nftables"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// SetEgress replaces sandbox id's egress policy at once: the internet
// switch (a set element) and the allow/deny rules (a chain of its own,
// reached through the egress verdict map), each in one transaction.
func (m *Manager) SetEgress(ctx context.Context, id string, e netpolicy.Egress) error {
	a, ok := m.Lookup(id)
	if !ok {
		return fmt.Errorf("egress of %s: not attached: %w", id, errdefs.ErrNotFound)
	}
	if err := m.applyEgress(ctx, a, e); err != nil {
		return err
	}
	m.mu.Lock()
	if cur := m.attached[id]; cur != nil {
		cur.AllowInternet = e.AllowInternet
		cur.Egress = e
		cur.chain = cur.chain || e.HasRules()
	}
	m.mu.Unlock()
	return nil
}

// applyEgress makes the kernel's state match e for attachment a.
func (m *Manager) applyEgress(ctx context.Context, a *Attachment, e netpolicy.Egress) error {
	ip4 := a.IP.As4()
	internet := setElement{&nftables.Set{Table: &nftables.Table{Name: m.opts.Table, Family: nftables.TableFamilyINet}, Name: "internet"}, ip4[:]}
	var err error
	if e.AllowInternet {
		err = addElements([]setElement{internet})
	} else {
		err = deleteElements([]setElement{internet})
	}
	if err != nil {
		return fmt.Errorf("egress of %s: %w", a.ID, err)
	}
	if !e.HasRules() && !a.chain {
		return nil // no rules, no chain to empty
	}
	if err := nft(ctx, egressScript(m.opts.Table, a.IP, e, m.opts.ProxyPort)); err != nil {
		return fmt.Errorf("egress rules of %s: %w", a.ID, err)
	}
	return nil
}

// egressChain names a sandbox's egress chain after its address.
func egressChain(ip netip.Addr) string {
	return "egress_" + strings.ReplaceAll(ip.String(), ".", "_")
}

// egressScript (re)writes ip's chain and map entry in one nft transaction.
// The chain is emptied rather than deleted when the rules go, so the
// transaction never depends on what exists.
func egressScript(table string, ip netip.Addr, e netpolicy.Egress, proxyPort int) string {
	chain := egressChain(ip)
	var b strings.Builder
	fmt.Fprintf(&b, "add chain inet %s %s\nflush chain inet %[1]s %[2]s\n", table, chain)
	for _, r := range []struct {
		set     []netip.Prefix
		verdict string
	}{{e.AllowOut, "accept"}, {e.DenyOut, "counter drop"}} {
		if len(r.set) > 0 {
			fmt.Fprintf(&b, "add rule inet %s %s ip daddr { %s } %s\n", table, chain, prefixList(r.set), r.verdict)
		}
	}
	fmt.Fprintf(&b, "add element inet %s egress { %s : jump %s }\n", table, ip, chain)
	natScript(&b, table, ip, e, proxyPort)
	return b.String()
}

// natChain names a sandbox's redirect chain after its address.
func natChain(ip netip.Addr) string { return "nat_" + strings.ReplaceAll(ip.String(), ".", "_") }

// natScript (re)writes ip's redirect chain: with allowOut domains, the HTTP
// and HTTPS connections its IP rules would drop go to the egress proxy
// (allowOut ranges never do; with internet access only denied ones do).
func natScript(b *strings.Builder, table string, ip netip.Addr, e netpolicy.Egress, proxyPort int) {
	chain := natChain(ip)
	fmt.Fprintf(b, "add chain inet %s %s\nflush chain inet %[1]s %[2]s\n", table, chain)
	if len(e.AllowDomains) > 0 && proxyPort > 0 {
		if len(e.AllowOut) > 0 {
			fmt.Fprintf(b, "add rule inet %s %s ip daddr { %s } return\n", table, chain, prefixList(e.AllowOut))
		}
		match := ""
		if e.AllowInternet {
			match = "ip daddr { " + prefixList(e.DenyOut) + " } "
		}
		if !e.AllowInternet || len(e.DenyOut) > 0 {
			fmt.Fprintf(b, "add rule inet %s %s %stcp dport { 80, 443 } redirect to :%d\n", table, chain, match, proxyPort)
		}
	}
	fmt.Fprintf(b, "add element inet %s egress_nat { %s : jump %s }\n", table, ip, chain)
}

// removeEgress deletes ip's map entry and chain; missing ones are fine.
// The address's next owner must not inherit them, so a failure to remove
// the entry is an error.
func (m *Manager) removeEgress(ctx context.Context, ip netip.Addr) error {
	err := nft(ctx, fmt.Sprintf("delete element inet %s egress { %s }\n", m.opts.Table, ip))
	if err != nil && !strings.Contains(err.Error(), "No such file") {
		return fmt.Errorf("removing egress rules of %s: %w", ip, err)
	}
	_ = nft(ctx, fmt.Sprintf("delete chain inet %s %s\n", m.opts.Table, egressChain(ip)))
	_ = nft(ctx, fmt.Sprintf("delete element inet %s egress_nat { %s }\n", m.opts.Table, ip))
	_ = nft(ctx, fmt.Sprintf("delete chain inet %s %s\n", m.opts.Table, natChain(ip)))
	return nil
}

// prefixList renders ps for an nft anonymous set, leaving out prefixes
// another one covers (nft refuses overlapping intervals there).
func prefixList(ps []netip.Prefix) string {
	var s []string
	for i, p := range ps {
		p = p.Masked()
		covered := false
		for j, q := range ps {
			q = q.Masked()
			if i != j && q.Bits() <= p.Bits() && q.Contains(p.Addr()) && (q.Bits() < p.Bits() || j < i) {
				covered = true
				break
			}
		}
		if !covered {
			s = append(s, p.String())
		}
	}
	return strings.Join(s, ", ")
}
