package network

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"
)

// Every nftables change goes straight to the kernel over netlink (the
// ruleset in nft.go, the per-sandbox chains in egress.go, the set entries
// here): the nft binary cost 40-150 ms per call on a busy host (it starts
// up and loads the whole ruleset), a netlink batch well under a millisecond.

// setElement is one entry for one sandbox in one of the manager's sets.
type setElement struct {
	set *nftables.Set
	key []byte
}

// sandboxElements are the entries sandbox traffic is checked against: its
// bridge port, the port's (name, MAC, IP) identity and, with internet
// access, its IP in the egress allowlist.
func sandboxElements(table, hostVeth string, ip netip.Addr, internet bool) []setElement {
	br := &nftables.Table{Name: table, Family: nftables.TableFamilyBridge}
	inet := &nftables.Table{Name: table, Family: nftables.TableFamilyINet}
	ip4 := ip.As4()
	els := []setElement{
		{&nftables.Set{Table: br, Name: "ifaces"}, ifnameKey(hostVeth)},
		{&nftables.Set{Table: br, Name: "ports"}, concat(ifnameKey(hostVeth), macFor(ip), ip4[:])},
	}
	if internet {
		els = append(els, setElement{&nftables.Set{Table: inet, Name: "internet"}, ip4[:]})
	}
	return els
}

// ifnameKey is an ifname set key: IFNAMSIZ bytes, NUL-padded.
func ifnameKey(name string) []byte {
	k := make([]byte, unix.IFNAMSIZ)
	copy(k, name)
	return k
}

// concat joins the fields of a concatenated key, each padded to a multiple
// of 4 bytes as the kernel's registers are.
func concat(fields ...[]byte) []byte {
	var k []byte
	for _, f := range fields {
		k = append(k, f...)
		for len(k)%4 != 0 {
			k = append(k, 0)
		}
	}
	return k
}

// addElements adds all of els in one transaction. Adding an element that
// is already there is not an error.
func addElements(els []setElement) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	for _, e := range els {
		if err := c.SetAddElements(e.set, []nftables.SetElement{{Key: e.key}}); err != nil {
			return fmt.Errorf("nftables: adding to set %s: %w", e.set.Name, err)
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables: adding set elements: %w", err)
	}
	return nil
}

// deleteElements removes els; elements (or tables) already gone are fine.
// The fast path is one transaction; if it fails (one missing element
// aborts it all) each element is removed on its own.
func deleteElements(els []setElement) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	for _, e := range els {
		_ = c.SetDeleteElements(e.set, []nftables.SetElement{{Key: e.key}})
	}
	if c.Flush() == nil {
		return nil
	}
	var errs []error
	for _, e := range els {
		_ = c.SetDeleteElements(e.set, []nftables.SetElement{{Key: e.key}})
		if err := c.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("nftables: removing from set %s: %w", e.set.Name, err))
		}
	}
	return errors.Join(errs...)
}
