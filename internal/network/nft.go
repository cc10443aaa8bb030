package network

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"text/template"
)

// rulesetTmpl is the manager's whole nftables state. Loading it replaces both
// tables atomically (add-then-delete-then-add in one transaction, so it works
// whether or not they exist). Set elements are added per sandbox later.
var rulesetTmpl = template.Must(template.New("ruleset").Parse(`
add table inet {{.Table}}
delete table inet {{.Table}}
add table bridge {{.Table}}
delete table bridge {{.Table}}

table inet {{.Table}} {
	# Sandbox addresses that may send traffic out of the bridge.
	set internet { type ipv4_addr; }
	# Sandbox address -> its egress chain (allowOut / denyOut rules).
	map egress { type ipv4_addr : verdict; }
	# Sandbox address -> its redirect chain (allowOut domains: HTTP and
	# HTTPS that the IP rules would drop go to the egress proxy).
	map egress_nat { type ipv4_addr : verdict; }

	chain prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		iifname "{{.Bridge}}" ip saddr vmap @egress_nat
	}

	chain forward {
		type filter hook forward priority filter; policy accept;
		# Routed (or, with br_netfilter, bridged) traffic between two sandboxes.
		iifname "{{.Bridge}}" oifname "{{.Bridge}}" counter drop
		iifname "{{.Bridge}}" meta nfproto ipv6 counter drop
		# Link-local addresses (cloud metadata services answer there) are
		# never reachable, whatever a sandbox's allowOut says.
		iifname "{{.Bridge}}" ip daddr 169.254.0.0/16 counter drop
		# A sandbox's own rules: allowOut accepts (whatever follows), denyOut
		# drops; no verdict returns here.
		iifname "{{.Bridge}}" ip saddr vmap @egress
		iifname "{{.Bridge}}" ip saddr != @internet counter drop
		# Nothing outside the host may open connections to a sandbox.
		oifname "{{.Bridge}}" ct state established,related accept
		oifname "{{.Bridge}}" counter drop
	}

	chain input {
		type filter hook input priority filter; policy accept;
		# Sandboxes answer the host; they never open connections to it,
		# but for the resolver and the egress proxy warren gives them.
		iifname "{{.Bridge}}" ct state established,related accept
		{{- if .DNS}}
		iifname "{{.Bridge}}" ip daddr {{.Gateway}} udp dport 53 accept
		{{- end}}
		{{- if .ProxyPort}}
		iifname "{{.Bridge}}" ip daddr {{.Gateway}} tcp dport {{.ProxyPort}} ct status dnat accept
		{{- end}}
		iifname "{{.Bridge}}" counter drop
	}

	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		ip saddr {{.Subnet}} oifname != "{{.Bridge}}" masquerade
	}
}

table bridge {{.Table}} {
	# port . MAC . address: the one identity each port may use, so a
	# sandbox can neither spoof another's IP nor poison the bridge's MAC
	# table or the host's ARP cache to receive another sandbox's traffic.
	set ports { type ifname . ether_addr . ipv4_addr; }
	# The bridge's ports (this kernel may lack "meta ibrname").
	set ifaces { type ifname; }

	chain prerouting {
		type filter hook prerouting priority filter; policy accept;
		iifname != @ifaces accept
		ether type ip iifname . ether saddr . ip saddr @ports accept
		ether type arp iifname . ether saddr . arp saddr ip @ports iifname . arp saddr ether . arp saddr ip @ports accept
		counter drop
	}
}
`))

type rulesetData struct {
	Table, Bridge string
	Subnet        netip.Prefix
	Gateway       netip.Addr
	DNS           bool
	ProxyPort     int
}

// nft runs one nft transaction read from script.
func nft(ctx context.Context, script string) error {
	cmd := exec.CommandContext(ctx, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("nft: %w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// loadRuleset replaces the manager's tables.
func loadRuleset(ctx context.Context, d rulesetData) error {
	var b strings.Builder
	if err := rulesetTmpl.Execute(&b, d); err != nil {
		return fmt.Errorf("rendering nftables ruleset: %w", err)
	}
	if err := nft(ctx, b.String()); err != nil {
		return fmt.Errorf("loading nftables ruleset: %w", err)
	}
	return nil
}

// deleteRuleset removes the manager's tables; missing tables are fine.
func deleteRuleset(ctx context.Context, table string) error {
	script := fmt.Sprintf("add table inet %[1]s\ndelete table inet %[1]s\nadd table bridge %[1]s\ndelete table bridge %[1]s\n", table)
	return nft(ctx, script)
}
