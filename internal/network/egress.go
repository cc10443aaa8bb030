package network

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
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
func (m *Manager) applyEgress(_ context.Context, a *Attachment, e netpolicy.Egress) error {
	ip4 := a.IP.As4()
	inet, _ := tables(m.opts.Table)
	internet := setElement{&nftables.Set{Table: inet, Name: "internet"}, ip4[:]}
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
	if err := writeEgress(m.opts.Table, a.IP, e, m.opts.ProxyPort); err != nil {
		return fmt.Errorf("egress rules of %s: %w", a.ID, err)
	}
	return nil
}

// egressChain names a sandbox's egress chain after its address.
func egressChain(ip netip.Addr) string {
	return "egress_" + strings.ReplaceAll(ip.String(), ".", "_")
}

// natChain names a sandbox's redirect chain after its address.
func natChain(ip netip.Addr) string { return "nat_" + strings.ReplaceAll(ip.String(), ".", "_") }

// writeEgress (re)writes ip's chains and map entries in one transaction.
// The chains are emptied rather than deleted when the rules go, so the
// transaction never depends on what exists.
func writeEgress(table string, ip netip.Addr, e netpolicy.Egress, proxyPort int) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	inet, _ := tables(table)
	chain := emptyChain(c, inet, egressChain(ip))
	for _, r := range []struct {
		set     []netip.Prefix
		verdict []expr.Any
	}{{e.AllowOut, accept()}, {e.DenyOut, drop()}} {
		if len(r.set) == 0 {
			continue
		}
		set, err := addRanges(c, inet, r.set)
		if err != nil {
			return err
		}
		c.AddRule(&nftables.Rule{Table: inet, Chain: chain, Exprs: match(nfproto(protoIPv4), ipIn(ipDaddr, set, false), r.verdict)})
	}
	if err := jumpFor(c, inet, "egress", ip, chain); err != nil {
		return err
	}
	nat := emptyChain(c, inet, natChain(ip))
	if err := addRedirects(c, nat, e, proxyPort); err != nil {
		return err
	}
	if err := jumpFor(c, inet, "egress_nat", ip, nat); err != nil {
		return err
	}
	return c.Flush()
}

// emptyChain adds a regular chain, or empties the one there.
func emptyChain(c *nftables.Conn, t *nftables.Table, name string) *nftables.Chain {
	ch := c.AddChain(&nftables.Chain{Name: name, Table: t})
	c.FlushChain(ch)
	return ch
}

// jumpFor maps ip to "jump chain" in the verdict map named vmap.
func jumpFor(c *nftables.Conn, t *nftables.Table, vmap string, ip netip.Addr, chain *nftables.Chain) error {
	ip4 := ip.As4()
	set := &nftables.Set{Table: t, Name: vmap, IsMap: true, KeyType: nftables.TypeIPAddr, DataType: nftables.TypeVerdict}
	el := nftables.SetElement{Key: ip4[:], VerdictData: &expr.Verdict{Kind: expr.VerdictJump, Chain: chain.Name}}
	if err := c.SetAddElements(set, []nftables.SetElement{el}); err != nil {
		return fmt.Errorf("nftables: %s entry: %w", vmap, err)
	}
	return nil
}

// addRedirects fills ip's redirect chain: with allowOut domains, the HTTP
// and HTTPS connections its IP rules would drop go to the egress proxy
// (allowOut ranges never do; with internet access only denied ones do).
func addRedirects(c *nftables.Conn, chain *nftables.Chain, e netpolicy.Egress, proxyPort int) error {
	if len(e.AllowDomains) == 0 || proxyPort <= 0 {
		return nil
	}
	t := chain.Table
	if len(e.AllowOut) > 0 {
		set, err := addRanges(c, t, e.AllowOut)
		if err != nil {
			return err
		}
		c.AddRule(&nftables.Rule{Table: t, Chain: chain, Exprs: match(nfproto(protoIPv4), ipIn(ipDaddr, set, false), verdict(expr.VerdictReturn))})
	}
	if e.AllowInternet && len(e.DenyOut) == 0 {
		return nil
	}
	var dst []expr.Any
	if e.AllowInternet {
		set, err := addRanges(c, t, e.DenyOut)
		if err != nil {
			return err
		}
		dst = ipIn(ipDaddr, set, false)
	}
	webPorts := &nftables.Set{Table: t, Anonymous: true, Constant: true, KeyType: nftables.TypeInetService}
	if err := c.AddSet(webPorts, []nftables.SetElement{{Key: port16(80)}, {Key: port16(443)}}); err != nil {
		return fmt.Errorf("nftables: port set: %w", err)
	}
	redirect := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{protoTCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Lookup{SourceRegister: 1, SetName: webPorts.Name, SetID: webPorts.ID},
		&expr.Immediate{Register: 1, Data: port16(uint16(proxyPort))},
		&expr.Redir{RegisterProtoMin: 1},
	}
	c.AddRule(&nftables.Rule{Table: t, Chain: chain, Exprs: match(nfproto(protoIPv4), dst, redirect)})
	return nil
}

func port16(p uint16) []byte { return []byte{byte(p >> 8), byte(p)} }

// addRanges adds an anonymous interval set of the addresses in ps.
func addRanges(c *nftables.Conn, t *nftables.Table, ps []netip.Prefix) (*nftables.Set, error) {
	set := &nftables.Set{Table: t, Anonymous: true, Constant: true, Interval: true, KeyType: nftables.TypeIPAddr}
	var els []nftables.SetElement
	for _, r := range ranges(ps) {
		els = append(els, nftables.SetElement{Key: be32(r.first)})
		if r.last != ^uint32(0) {
			els = append(els, nftables.SetElement{Key: be32(r.last + 1), IntervalEnd: true})
		}
	}
	if err := c.AddSet(set, els); err != nil {
		return nil, fmt.Errorf("nftables: address set: %w", err)
	}
	return set, nil
}

func be32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

// addrRange is the IPv4 addresses first through last.
type addrRange struct{ first, last uint32 }

// ranges turns ps into sorted, disjoint, non-adjacent ranges: the kernel
// refuses overlapping intervals in a set, and an interval's end may not be
// the next one's start.
func ranges(ps []netip.Prefix) []addrRange {
	var rs []addrRange
	for _, p := range ps {
		if !p.Addr().Is4() {
			continue
		}
		a4 := p.Masked().Addr().As4()
		first := uint32(a4[0])<<24 | uint32(a4[1])<<16 | uint32(a4[2])<<8 | uint32(a4[3])
		rs = append(rs, addrRange{first, first | ^uint32(0)>>p.Bits()})
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b addrRange) int {
		switch {
		case a.first < b.first:
			return -1
		case a.first > b.first:
			return 1
		}
		return 0
	})
	out := rs[:1]
	for _, r := range rs[1:] {
		cur := &out[len(out)-1]
		if cur.last == ^uint32(0) || r.first <= cur.last+1 {
			cur.last = max(cur.last, r.last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// removeEgress deletes ip's map entries and chains; missing ones are fine.
// The address's next owner must not inherit them, so a failure to remove
// the egress entry is an error. Each step is a transaction of its own: one
// missing object would abort a joint one.
func (m *Manager) removeEgress(_ context.Context, ip netip.Addr) error {
	inet, _ := tables(m.opts.Table)
	ip4 := ip.As4()
	step := func(f func(c *nftables.Conn) error) error {
		c, err := nftables.New()
		if err != nil {
			return fmt.Errorf("nftables: %w", err)
		}
		if err := f(c); err != nil {
			return err
		}
		if err := c.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
		return nil
	}
	unmap := func(vmap string) func(c *nftables.Conn) error {
		return func(c *nftables.Conn) error {
			set := &nftables.Set{Table: inet, Name: vmap, IsMap: true, KeyType: nftables.TypeIPAddr, DataType: nftables.TypeVerdict}
			return c.SetDeleteElements(set, []nftables.SetElement{{Key: ip4[:]}})
		}
	}
	delChain := func(name string) func(c *nftables.Conn) error {
		return func(c *nftables.Conn) error { c.DelChain(&nftables.Chain{Table: inet, Name: name}); return nil }
	}
	if err := step(unmap("egress")); err != nil {
		return fmt.Errorf("removing egress rules of %s: %w", ip, err)
	}
	_ = step(delChain(egressChain(ip)))
	_ = step(unmap("egress_nat"))
	_ = step(delChain(natChain(ip)))
	return nil
}
