package network

import (
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
)

// The manager's whole nftables state is two tables named opts.Table, built
// here over netlink in one transaction. In nft's words:
//
//	table inet T {
//		set internet { type ipv4_addr; }            # may leave the bridge
//		map egress { type ipv4_addr : verdict; }     # address -> its egress chain
//		map egress_nat { type ipv4_addr : verdict; } # address -> its redirect chain
//		chain prerouting { nat dstnat: iifname BR ip saddr vmap @egress_nat }
//		chain forward { filter: see forwardRules }
//		chain input { filter: see inputRules }
//		chain postrouting { nat srcnat: ip saddr SUBNET oifname != BR masquerade }
//	}
//	table bridge T {
//		set ports { type ifname . ether_addr . ipv4_addr; }
//		set ifaces { type ifname; }
//		chain prerouting { filter: see bridgeRules }
//	}
//
// Set elements are added per sandbox later (nftsets.go, egress.go).

type rulesetData struct {
	Table, Bridge string
	Subnet        netip.Prefix
	Gateway       netip.Addr
	DNS           bool
	ProxyPort     int
}

// inetSets are the inet table's sets, their IDs valid in one transaction.
type inetSets struct{ internet, egress, egressNat *nftables.Set }

// loadRuleset replaces the manager's tables atomically: add-then-delete-
// then-add in one transaction works whether or not they exist.
func loadRuleset(d rulesetData) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	inet, br := tables(d.Table)
	for _, t := range []*nftables.Table{inet, br} {
		c.AddTable(t)
		c.DelTable(t)
		c.AddTable(t)
	}
	if err := addInet(c, inet, d); err != nil {
		return err
	}
	if err := addBridge(c, br); err != nil {
		return err
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("loading nftables ruleset: %w", err)
	}
	return nil
}

// deleteRuleset removes the manager's tables; missing tables are fine.
func deleteRuleset(table string) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	inet, br := tables(table)
	for _, t := range []*nftables.Table{inet, br} {
		c.AddTable(t)
		c.DelTable(t)
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("deleting nftables ruleset: %w", err)
	}
	return nil
}

func tables(name string) (inet, br *nftables.Table) {
	return &nftables.Table{Name: name, Family: nftables.TableFamilyINet},
		&nftables.Table{Name: name, Family: nftables.TableFamilyBridge}
}

func addInet(c *nftables.Conn, t *nftables.Table, d rulesetData) error {
	s := inetSets{
		internet:  &nftables.Set{Table: t, Name: "internet", KeyType: nftables.TypeIPAddr},
		egress:    &nftables.Set{Table: t, Name: "egress", IsMap: true, KeyType: nftables.TypeIPAddr, DataType: nftables.TypeVerdict},
		egressNat: &nftables.Set{Table: t, Name: "egress_nat", IsMap: true, KeyType: nftables.TypeIPAddr, DataType: nftables.TypeVerdict},
	}
	for _, set := range []*nftables.Set{s.internet, s.egress, s.egressNat} {
		if err := c.AddSet(set, nil); err != nil {
			return fmt.Errorf("nftables: set %s: %w", set.Name, err)
		}
	}
	policy := nftables.ChainPolicyAccept
	chains := []struct {
		chain *nftables.Chain
		rules [][]expr.Any
	}{
		{&nftables.Chain{Name: "prerouting", Type: nftables.ChainTypeNAT, Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityNATDest},
			[][]expr.Any{match(iif(d.Bridge), nfproto(protoIPv4), ipIn(ipSaddr, s.egressNat, false))}},
		{&nftables.Chain{Name: "forward", Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter},
			forwardRules(d.Bridge, s)},
		{&nftables.Chain{Name: "input", Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter},
			inputRules(d)},
		{&nftables.Chain{Name: "postrouting", Type: nftables.ChainTypeNAT, Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource},
			[][]expr.Any{match(nfproto(protoIPv4), ipIs(ipSaddr, d.Subnet), ifname(expr.MetaKeyOIFNAME, d.Bridge, false), []expr.Any{&expr.Masq{}})}},
	}
	for _, ch := range chains {
		ch.chain.Table, ch.chain.Policy = t, &policy
		c.AddChain(ch.chain)
		for _, r := range ch.rules {
			c.AddRule(&nftables.Rule{Table: t, Chain: ch.chain, Exprs: r})
		}
	}
	return nil
}

// forwardRules guard routed (or, with br_netfilter, bridged) traffic.
func forwardRules(bridge string, s inetSets) [][]expr.Any {
	linkLocal := netip.MustParsePrefix("169.254.0.0/16")
	return [][]expr.Any{
		// Between two sandboxes.
		match(iif(bridge), oif(bridge), drop()),
		match(iif(bridge), nfproto(protoIPv6), drop()),
		// Link-local addresses (cloud metadata services answer there) are
		// never reachable, whatever a sandbox's allowOut says.
		match(iif(bridge), nfproto(protoIPv4), ipIs(ipDaddr, linkLocal), drop()),
		// A sandbox's own rules: allowOut accepts (whatever follows),
		// denyOut drops; no verdict returns here.
		match(iif(bridge), nfproto(protoIPv4), ipIn(ipSaddr, s.egress, false)),
		match(iif(bridge), nfproto(protoIPv4), ipIn(ipSaddr, s.internet, true), drop()),
		// Nothing outside the host may open connections to a sandbox.
		match(oif(bridge), established(), accept()),
		match(oif(bridge), drop()),
	}
}

// inputRules: sandboxes answer the host; they never open connections to
// it, but for the resolver and the egress proxy warren gives them.
func inputRules(d rulesetData) [][]expr.Any {
	gw := netip.PrefixFrom(d.Gateway, 32)
	rules := [][]expr.Any{match(iif(d.Bridge), established(), accept())}
	if d.DNS {
		rules = append(rules, match(iif(d.Bridge), nfproto(protoIPv4), ipIs(ipDaddr, gw), dport(protoUDP, 53), accept()))
	}
	if d.ProxyPort > 0 {
		rules = append(rules, match(iif(d.Bridge), nfproto(protoIPv4), ipIs(ipDaddr, gw),
			dport(protoTCP, uint16(d.ProxyPort)), ctHas(expr.CtKeySTATUS, ipsDstNat), accept()))
	}
	return append(rules, match(iif(d.Bridge), drop()))
}

// addBridge adds the bridge table: each port may use one identity, port .
// MAC . address, so a sandbox can neither spoof another's IP nor poison the
// bridge's MAC table or the host's ARP cache to receive another sandbox's
// traffic. ifaces are the bridge's ports (a kernel may lack "meta ibrname").
func addBridge(c *nftables.Conn, t *nftables.Table) error {
	ports := &nftables.Set{Table: t, Name: "ports", Concatenation: true,
		KeyType: nftables.MustConcatSetType(nftables.TypeIFName, nftables.TypeEtherAddr, nftables.TypeIPAddr)}
	ifaces := &nftables.Set{Table: t, Name: "ifaces", KeyType: nftables.TypeIFName}
	for _, set := range []*nftables.Set{ports, ifaces} {
		if err := c.AddSet(set, nil); err != nil {
			return fmt.Errorf("nftables: set %s: %w", set.Name, err)
		}
	}
	policy := nftables.ChainPolicyAccept
	ch := c.AddChain(&nftables.Chain{Name: "prerouting", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityRef(-200), Policy: &policy})
	// ARP: sender hardware address at 8, sender protocol address at 14.
	const arpSHA, arpSPA = 8, 14
	rules := [][]expr.Any{
		match([]expr.Any{&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
			&expr.Lookup{SourceRegister: 1, SetName: ifaces.Name, SetID: ifaces.ID, Invert: true}}, accept()),
		match(etherType(etherIP), portIdentity(ports, expr.PayloadBaseLLHeader, 6, ipSaddr), accept()),
		match(etherType(etherARP), portIdentity(ports, expr.PayloadBaseLLHeader, 6, arpSPA),
			portIdentity(ports, expr.PayloadBaseNetworkHeader, arpSHA, arpSPA), accept()),
		drop(),
	}
	for _, r := range rules {
		c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: r})
	}
	return nil
}
