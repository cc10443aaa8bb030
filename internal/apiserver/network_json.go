package apiserver

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// Bounds on what one sandbox's policy may list.
const (
	maxEgressEntries = 1000
	maxHTTPSPorts    = 100
)

// parseNetwork validates a SandboxNetworkConfig into warren's policy.
// allowOut may hold domains ("example.com", "*.example.com"), which the
// egress proxy enforces; header rules and a user's egress proxy are
// refused rather than ignored. allowInternet is allow_internet_access.
func parseNetwork(n *rest.SandboxNetwork, allowInternet bool) (netpolicy.Policy, error) {
	p := netpolicy.Policy{Egress: netpolicy.Egress{AllowInternet: allowInternet}}
	if n == nil {
		return p, nil
	}
	var err error
	if p.AllowOut, p.AllowDomains, err = destinations("allowOut", deref(n.AllowOut), true); err != nil {
		return p, err
	}
	if p.DenyOut, _, err = destinations("denyOut", deref(n.DenyOut), false); err != nil {
		return p, err
	}
	if n.EgressProxy != nil {
		return p, invalid("network.egressProxy is not supported by this server")
	}
	if n.Rules != nil && len(*n.Rules) > 0 {
		return p, invalid("network.rules (header transforms) are not supported by this server")
	}
	p.Private = n.AllowPublicTraffic != nil && !*n.AllowPublicTraffic
	if p.HTTPSPorts, err = httpsPorts(deref(n.HTTPSPorts)); err != nil {
		return p, err
	}
	if n.MaskRequestHost != nil {
		m := *n.MaskRequestHost
		if len(m) > 255 || strings.ContainsAny(m, " \t\r\n/") {
			return p, invalid(fmt.Sprintf("network.maskRequestHost %q is not a host name (with an optional :port, ${PORT} allowed)", m))
		}
		p.MaskRequestHost = m
	}
	return p, nil
}

// The E2B shape is rest.SandboxNetwork; this file is the only code that
// maps it to and from warren's policy.

// renderNetwork is the sandbox info's `network`: E2B's shape of p, or nil
// when p sets nothing. Entries come back normalised: ranges masked, a
// single address without /32, domains lowercase and after the ranges.
func renderNetwork(p netpolicy.Policy) *rest.SandboxNetwork {
	if p.IsZero() {
		return nil
	}
	var n rest.SandboxNetwork
	if len(p.HTTPSPorts) > 0 {
		n.HTTPSPorts = &p.HTTPSPorts
	}
	var allow, deny []string
	for _, pr := range p.AllowOut {
		allow = append(allow, prefixText(pr))
	}
	allow = append(allow, p.AllowDomains...)
	for _, pr := range p.DenyOut {
		deny = append(deny, prefixText(pr))
	}
	if len(allow) > 0 {
		n.AllowOut = &allow
	}
	if len(deny) > 0 {
		n.DenyOut = &deny
	}
	if p.Private {
		f := false
		n.AllowPublicTraffic = &f
	}
	n.MaskRequestHost = optional(p.MaskRequestHost)
	return &n
}

func prefixText(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

// httpsPorts validates network.httpsPorts: ports of services in the
// sandbox that serve TLS themselves. envd's port is warren's to speak to.
func httpsPorts(ports []int) ([]int, error) {
	if len(ports) > maxHTTPSPorts {
		return nil, invalid(fmt.Sprintf("network.httpsPorts has %d entries; at most %d are allowed", len(ports), maxHTTPSPorts))
	}
	var out []int
	for _, p := range ports {
		switch {
		case p < 1 || p > 65535:
			return nil, invalid(fmt.Sprintf("network.httpsPorts: %d is not a port number", p))
		case p == wire.EnvdPort:
			return nil, invalid(fmt.Sprintf("network.httpsPorts: envd's port %d cannot be listed", p))
		case !slices.Contains(out, p):
			out = append(out, p)
		}
	}
	return out, nil
}

// destinations parses IPs and CIDRs, and domains where they are valid
// (allowOut).
func destinations(field string, entries []string, domainsValid bool) ([]netip.Prefix, []string, error) {
	if len(entries) > maxEgressEntries {
		return nil, nil, invalid(fmt.Sprintf("network.%s has %d entries; at most %d are allowed", field, len(entries), maxEgressEntries))
	}
	var out []netip.Prefix
	var domains []string
	for _, e := range entries {
		e = strings.TrimSpace(e)
		p, err := netip.ParsePrefix(e)
		if err != nil {
			if a, aerr := netip.ParseAddr(e); aerr == nil {
				p, err = netip.PrefixFrom(a, a.BitLen()), nil
			}
		}
		switch {
		case err == nil && !p.Addr().Is4():
			return nil, nil, invalid(fmt.Sprintf("network.%s: %q is not IPv4 (sandboxes have no IPv6)", field, e))
		case err == nil:
			out = append(out, p.Masked())
		case !looksLikeDomain(e):
			return nil, nil, invalid(fmt.Sprintf("network.%s: %q is not an IP address or CIDR range", field, e))
		case !domainsValid:
			return nil, nil, invalid(fmt.Sprintf("network.%s: %q: only allowOut takes domains; denyOut takes IP addresses and CIDR ranges", field, e))
		default:
			domains = append(domains, strings.ToLower(e))
		}
	}
	return out, domains, nil
}

func looksLikeDomain(s string) bool {
	s = strings.TrimPrefix(s, "*.")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return strings.Contains(s, ".")
}
