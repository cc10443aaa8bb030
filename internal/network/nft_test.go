package network

import (
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/testutil"
)

func TestRanges(t *testing.T) {
	t.Parallel()
	p := netip.MustParsePrefix
	ip := func(s string) uint32 {
		a := netip.MustParseAddr(s).As4()
		return uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	}
	for _, tc := range []struct {
		name string
		in   []netip.Prefix
		want []addrRange
	}{
		{"none", nil, nil},
		{"one address", []netip.Prefix{p("8.8.8.8/32")}, []addrRange{{ip("8.8.8.8"), ip("8.8.8.8")}}},
		{"unmasked", []netip.Prefix{p("10.1.2.3/16")}, []addrRange{{ip("10.1.0.0"), ip("10.1.255.255")}}},
		{"covered", []netip.Prefix{p("1.2.3.4/32"), p("1.2.3.0/24")}, []addrRange{{ip("1.2.3.0"), ip("1.2.3.255")}}},
		{"adjacent merge", []netip.Prefix{p("1.2.4.0/24"), p("1.2.3.0/24")}, []addrRange{{ip("1.2.3.0"), ip("1.2.4.255")}}},
		{"apart, sorted", []netip.Prefix{p("9.0.0.0/8"), p("1.0.0.0/8")}, []addrRange{{ip("1.0.0.0"), ip("1.255.255.255")}, {ip("9.0.0.0"), ip("9.255.255.255")}}},
		{"everything", []netip.Prefix{p("0.0.0.0/0"), p("5.5.5.5/32")}, []addrRange{{0, ^uint32(0)}}},
		{"ipv6 ignored", []netip.Prefix{p("::1/128")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ranges(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("ranges(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestRulesetAsNftSeesIt loads the ruleset and one sandbox's egress chains
// over netlink and reads them back with nft: the rules must be the ones
// the manager's design states (nft.go), word for word.
func TestRulesetAsNftSeesIt(t *testing.T) {
	testutil.RequiresRoot(t)
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("no nft binary to read the ruleset back")
	}
	table := "wrnnftlist" + testToken
	d := rulesetData{Table: table, Bridge: "wrnnbr0", Subnet: netip.MustParsePrefix("10.250.3.0/24"),
		Gateway: netip.MustParseAddr("10.250.3.1"), DNS: true, ProxyPort: 3128}
	if err := loadRuleset(d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteRuleset(table) })
	ip := netip.MustParseAddr("10.250.3.7")
	e := netpolicy.Egress{AllowInternet: true, AllowDomains: []string{"example.com"},
		AllowOut: []netip.Prefix{netip.MustParsePrefix("1.2.3.0/24"), netip.MustParsePrefix("1.2.4.0/24"), netip.MustParsePrefix("8.8.8.8/32")},
		DenyOut:  []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}
	for range 2 { // rewriting must not depend on what exists
		if err := writeEgress(table, ip, e, d.ProxyPort); err != nil {
			t.Fatal(err)
		}
	}
	if got := listTable(t, "inet", table); got != wantInet {
		t.Errorf("inet table:\n%s\nwant:\n%s", got, wantInet)
	}
	if got := listTable(t, "bridge", table); got != wantBridge {
		t.Errorf("bridge table:\n%s\nwant:\n%s", got, wantBridge)
	}
	m := &Manager{opts: Options{Table: table}}
	for range 2 { // removing what is gone is fine
		if err := m.removeEgress(t.Context(), ip); err != nil {
			t.Fatal(err)
		}
	}
	if got := listTable(t, "inet", table); strings.Contains(got, "10_250_3_7") || strings.Contains(got, "10.250.3.7") {
		t.Errorf("sandbox's chains or entries left after removeEgress:\n%s", got)
	}
}

var counters = regexp.MustCompile(` packets \d+ bytes \d+`)

func listTable(t *testing.T, family, table string) string {
	t.Helper()
	out, err := exec.Command("nft", "list", "table", family, table).CombinedOutput()
	if err != nil {
		t.Fatalf("nft list: %v: %s", err, out)
	}
	s := counters.ReplaceAllString(string(out), "")
	return strings.TrimSpace(strings.ReplaceAll(s, table, "T"))
}

const wantInet = `table inet T {
	set internet {
		type ipv4_addr
	}

	map egress {
		type ipv4_addr : verdict
		elements = { 10.250.3.7 : jump egress_10_250_3_7 }
	}

	map egress_nat {
		type ipv4_addr : verdict
		elements = { 10.250.3.7 : jump nat_10_250_3_7 }
	}

	chain prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		iifname "wrnnbr0" ip saddr vmap @egress_nat
	}

	chain forward {
		type filter hook forward priority filter; policy accept;
		iifname "wrnnbr0" oifname "wrnnbr0" counter drop
		iifname "wrnnbr0" meta nfproto ipv6 counter drop
		iifname "wrnnbr0" ip daddr 169.254.0.0/16 counter drop
		iifname "wrnnbr0" ip saddr vmap @egress
		iifname "wrnnbr0" ip saddr != @internet counter drop
		oifname "wrnnbr0" ct state established,related accept
		oifname "wrnnbr0" counter drop
	}

	chain input {
		type filter hook input priority filter; policy accept;
		iifname "wrnnbr0" ct state established,related accept
		iifname "wrnnbr0" ip daddr 10.250.3.1 udp dport 53 accept
		iifname "wrnnbr0" ip daddr 10.250.3.1 tcp dport 3128 ct status dnat accept
		iifname "wrnnbr0" counter drop
	}

	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		ip saddr 10.250.3.0/24 oifname != "wrnnbr0" masquerade
	}

	chain egress_10_250_3_7 {
		ip daddr { 1.2.3.0-1.2.4.255, 8.8.8.8 } accept
		ip daddr { 0.0.0.0/0 } counter drop
	}

	chain nat_10_250_3_7 {
		ip daddr { 1.2.3.0-1.2.4.255, 8.8.8.8 } return
		ip daddr { 0.0.0.0/0 } tcp dport { 80, 443 } redirect to :3128
	}
}`

const wantBridge = `table bridge T {
	set ports {
		type ifname . ether_addr . ipv4_addr
	}

	set ifaces {
		type ifname
	}

	chain prerouting {
		type filter hook prerouting priority filter; policy accept;
		iifname != @ifaces accept
		iifname . ether saddr . ip saddr @ports accept
		iifname . ether saddr . arp saddr ip @ports iifname . arp saddr ether . arp saddr ip @ports accept
		counter drop
	}
}`
