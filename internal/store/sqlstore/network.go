package sqlstore

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// decodePolicy reads network_policy, or for a row written before it
// existed the legacy network column.
func decodePolicy(policy, legacy []byte) (netpolicy.Policy, error) {
	var p netpolicy.Policy
	switch {
	case len(policy) > 0:
		if err := json.Unmarshal(policy, &p); err != nil {
			return p, fmt.Errorf("decoding network policy: %w", err)
		}
	case len(legacy) > 0:
		return legacyNetwork(legacy)
	}
	return p, nil
}

// legacyNetwork reads what schema versions before 5 stored: E2B's
// SandboxNetworkConfig as the client sent it, validated at create. That
// format is frozen, so this reader never changes with the API.
func legacyNetwork(raw []byte) (netpolicy.Policy, error) {
	var old struct {
		AllowOut           []string `json:"allowOut"`
		DenyOut            []string `json:"denyOut"`
		AllowPublicTraffic *bool    `json:"allowPublicTraffic"`
		MaskRequestHost    string   `json:"maskRequestHost"`
		HTTPSPorts         []int    `json:"httpsPorts"`
	}
	var p netpolicy.Policy
	if err := json.Unmarshal(raw, &old); err != nil {
		return p, fmt.Errorf("decoding legacy network config: %w", err)
	}
	for _, e := range old.AllowOut {
		if pr, ok := legacyPrefix(e); ok {
			p.AllowOut = append(p.AllowOut, pr)
		} else {
			p.AllowDomains = append(p.AllowDomains, strings.ToLower(strings.TrimSpace(e)))
		}
	}
	for _, e := range old.DenyOut {
		if pr, ok := legacyPrefix(e); ok {
			p.DenyOut = append(p.DenyOut, pr)
		}
	}
	p.Private = old.AllowPublicTraffic != nil && !*old.AllowPublicTraffic
	p.MaskRequestHost, p.HTTPSPorts = old.MaskRequestHost, old.HTTPSPorts
	return p, nil
}

func legacyPrefix(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, 32), true
	}
	return netip.Prefix{}, false
}
