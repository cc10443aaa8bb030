package network

import (
	"encoding/binary"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// The matches the ruleset and the egress chains are written in, one
// function per nft phrase so a rule reads as its nft text would.
// Everything is loaded into register 1, except concatenated set keys,
// which take consecutive 32-bit registers from concatReg on.

// concatReg is NFT_REG32_00, the first 32-bit register.
const concatReg = 8

// match chains phrases into one rule's expressions.
func match(parts ...[]expr.Any) []expr.Any {
	var out []expr.Any
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// ifname compares the input ("iifname") or output ("oifname") interface
// name with name; eq false negates.
func ifname(key expr.MetaKey, name string, eq bool) []expr.Any {
	op := expr.CmpOpEq
	if !eq {
		op = expr.CmpOpNeq
	}
	return []expr.Any{
		&expr.Meta{Key: key, Register: 1},
		&expr.Cmp{Op: op, Register: 1, Data: ifnameKey(name)},
	}
}

func iif(name string) []expr.Any { return ifname(expr.MetaKeyIIFNAME, name, true) }
func oif(name string) []expr.Any { return ifname(expr.MetaKeyOIFNAME, name, true) }

// nfproto is "meta nfproto ipv4/ipv6", the dependency of every ip match in
// an inet table.
func nfproto(proto byte) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
	}
}

// IPv4 header offsets of the source and destination address.
const (
	ipSaddr = 12
	ipDaddr = 16
)

// ipAddr loads an IPv4 header's address field (ipSaddr, ipDaddr) into reg.
func ipAddr(field, reg uint32) *expr.Payload {
	return &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: field, Len: 4}
}

// ipIs is "ip saddr/daddr p" for a prefix or, at /32, an address.
func ipIs(field uint32, p netip.Prefix) []expr.Any {
	p = p.Masked()
	addr := p.Addr().As4()
	mask := binary.BigEndian.AppendUint32(nil, ^uint32(0)<<(32-p.Bits()))
	if p.Bits() == 0 {
		mask = []byte{0, 0, 0, 0}
	}
	return []expr.Any{
		ipAddr(field, 1),
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: addr[:]},
	}
}

// ipIn is "ip saddr/daddr @set" (or != with invert); for a map with a
// verdict it is "vmap @set".
func ipIn(field uint32, set *nftables.Set, invert bool) []expr.Any {
	l := &expr.Lookup{SourceRegister: 1, SetName: set.Name, SetID: set.ID, Invert: invert}
	if set.IsMap {
		l.IsDestRegSet, l.DestRegister = true, 0 // the verdict register
	}
	return []expr.Any{ipAddr(field, 1), l}
}

// dport is "tcp/udp dport port".
func dport(proto byte, port uint16) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
	}
}

// ctHas is "ct state/status" having any of bits: state established,related,
// status dnat.
func ctHas(key expr.CtKey, bits uint32) []expr.Any {
	return []expr.Any{
		&expr.Ct{Key: key, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(bits), Xor: binaryutil.NativeEndian.PutUint32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)},
	}
}

// established is "ct state established,related".
func established() []expr.Any {
	return ctHas(expr.CtKeySTATE, expr.CtStateBitESTABLISHED|expr.CtStateBitRELATED)
}

// ipsDstNat is the conntrack status bit "dnat" tests (IPS_DST_NAT).
const ipsDstNat = 1 << 5

// etherType is "ether type ip/arp" in the bridge family.
func etherType(t uint16) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseLLHeader, Offset: 12, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(t)},
	}
}

// portIdentity is "iifname . <mac> . <ip> @ports", the MAC and IP read
// from base at macOff and ipOff.
func portIdentity(ports *nftables.Set, macBase expr.PayloadBase, macOff uint32, ipOff uint32) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: concatReg},
		&expr.Payload{DestRegister: concatReg + 4, Base: macBase, Offset: macOff, Len: 6},
		&expr.Payload{DestRegister: concatReg + 6, Base: expr.PayloadBaseNetworkHeader, Offset: ipOff, Len: 4},
		&expr.Lookup{SourceRegister: concatReg, SetName: ports.Name, SetID: ports.ID},
	}
}

func counter() []expr.Any { return []expr.Any{&expr.Counter{}} }

func verdict(k expr.VerdictKind) []expr.Any { return []expr.Any{&expr.Verdict{Kind: k}} }

func accept() []expr.Any { return verdict(expr.VerdictAccept) }

// drop is "counter drop".
func drop() []expr.Any { return match(counter(), verdict(expr.VerdictDrop)) }

// Values of the matches above.
const (
	protoIPv4 = unix.NFPROTO_IPV4
	protoIPv6 = unix.NFPROTO_IPV6
	protoTCP  = unix.IPPROTO_TCP
	protoUDP  = unix.IPPROTO_UDP
	etherIP   = unix.ETH_P_IP
	etherARP  = unix.ETH_P_ARP
)
