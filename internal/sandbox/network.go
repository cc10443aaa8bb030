package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/warren-sandbox/warren/internal/wire"
	"net/netip"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
)

// NetworkConfig is the part of E2B's SandboxNetworkConfig warren acts on;
// the JSON itself is kept as given and echoed by info.
type NetworkConfig struct {
	AllowOut, DenyOut []netip.Prefix
	AllowDomains      []string // allowOut names, lowercased

	Private         bool   // allowPublicTraffic: false
	MaskRequestHost string // replaces the Host header towards the sandbox; ${PORT} is the port
	HTTPSPorts      []int  // ports whose services the proxy reaches over TLS
}

// networkJSON is SandboxNetworkConfig and SandboxNetworkUpdateConfig.
type networkJSON struct {
	AllowOut           []string        `json:"allowOut"`
	DenyOut            []string        `json:"denyOut"`
	AllowPublicTraffic *bool           `json:"allowPublicTraffic"`
	MaskRequestHost    *string         `json:"maskRequestHost"`
	EgressProxy        json.RawMessage `json:"egressProxy"`
	Rules              json.RawMessage `json:"rules"`
	HTTPSPorts         []int           `json:"httpsPorts"`
}

// maxEgressEntries bounds allowOut and denyOut.
const maxEgressEntries = 1000

// ParseNetwork validates a SandboxNetworkConfig. allowOut may hold domains
// ("example.com", "*.example.com"), which the egress proxy enforces; header
// rules and a user's egress proxy are refused rather than ignored.
func ParseNetwork(raw []byte) (NetworkConfig, error) {
	var cfg NetworkConfig
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return cfg, nil
	}
	var n networkJSON
	if err := json.Unmarshal(raw, &n); err != nil {
		return cfg, invalidf("network: %v", err)
	}
	var err error
	if cfg.AllowOut, cfg.AllowDomains, err = prefixes("allowOut", n.AllowOut, true); err != nil {
		return cfg, err
	}
	if cfg.DenyOut, _, err = prefixes("denyOut", n.DenyOut, false); err != nil {
		return cfg, err
	}
	if p := bytes.TrimSpace(n.EgressProxy); len(p) > 0 && string(p) != "null" {
		return cfg, invalidf("network.egressProxy is not supported by this server")
	}
	if r := bytes.TrimSpace(n.Rules); len(r) > 0 && string(r) != "null" && string(r) != "{}" {
		return cfg, invalidf("network.rules (header transforms) are not supported by this server")
	}
	cfg.Private = n.AllowPublicTraffic != nil && !*n.AllowPublicTraffic
	if cfg.HTTPSPorts, err = httpsPorts(n.HTTPSPorts); err != nil {
		return cfg, err
	}
	if n.MaskRequestHost != nil {
		m := *n.MaskRequestHost
		if len(m) > 255 || strings.ContainsAny(m, " \t\r\n/") {
			return cfg, invalidf("network.maskRequestHost %q is not a host name (with an optional :port, ${PORT} allowed)", m)
		}
		cfg.MaskRequestHost = m
	}
	return cfg, nil
}

// maxHTTPSPorts bounds network.httpsPorts.
const maxHTTPSPorts = 100

// httpsPorts validates network.httpsPorts: ports of services in the
// sandbox that serve TLS themselves. envd's port is warren's to speak to.
func httpsPorts(ports []int) ([]int, error) {
	if len(ports) > maxHTTPSPorts {
		return nil, invalidf("network.httpsPorts has %d entries; at most %d are allowed", len(ports), maxHTTPSPorts)
	}
	var out []int
	for _, p := range ports {
		switch {
		case p < 1 || p > 65535:
			return nil, invalidf("network.httpsPorts: %d is not a port number", p)
		case p == wire.EnvdPort:
			return nil, invalidf("network.httpsPorts: envd's port %d cannot be listed", p)
		case !slices.Contains(out, p):
			out = append(out, p)
		}
	}
	return out, nil
}

// prefixes parses IPs and CIDRs, and domains where they are valid
// (allowOut).
func prefixes(field string, entries []string, domainsValid bool) ([]netip.Prefix, []string, error) {
	if len(entries) > maxEgressEntries {
		return nil, nil, invalidf("network.%s has %d entries; at most %d are allowed", field, len(entries), maxEgressEntries)
	}
	var out []netip.Prefix
	var domains []string
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil {
			if !p.Addr().Is4() {
				return nil, nil, invalidf("network.%s: %q is not IPv4 (sandboxes have no IPv6)", field, e)
			}
			out = append(out, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil {
			if !a.Is4() {
				return nil, nil, invalidf("network.%s: %q is not IPv4 (sandboxes have no IPv6)", field, e)
			}
			out = append(out, netip.PrefixFrom(a, 32))
			continue
		}
		if looksLikeDomain(e) {
			if !domainsValid {
				return nil, nil, invalidf("network.%s: %q: only allowOut takes domains; denyOut takes IP addresses and CIDR ranges", field, e)
			}
			domains = append(domains, strings.ToLower(e))
			continue
		}
		return nil, nil, invalidf("network.%s: %q is not an IP address or CIDR range", field, e)
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

func invalidf(format string, args ...any) error {
	return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// runtimeNetwork is what the backend enforces for sb.
func runtimeNetwork(sb *store.Sandbox) runtime.Network {
	cfg, _ := ParseNetwork(sb.Network) // validated before it was stored
	return runtime.Network{AllowInternet: sb.AllowInternet, AllowOut: cfg.AllowOut, DenyOut: cfg.DenyOut, AllowDomains: cfg.AllowDomains}
}

// UpdateNetwork replaces a sandbox's egress settings (PUT
// /sandboxes/{id}/network): allowOut, denyOut and the internet switch, all
// at once; fields left out are cleared. Its public-traffic settings stay.
func (m *Manager) UpdateNetwork(ctx context.Context, id string, raw []byte, allowInternet bool) error {
	upd, err := ParseNetwork(raw)
	if err != nil {
		return err
	}
	e, err := m.get(id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	merged, err := mergeNetwork(e.sb.Network, raw)
	if err != nil {
		return err
	}
	if err := m.checkDomains(upd); err != nil {
		return err
	}
	n := runtime.Network{AllowInternet: allowInternet, AllowOut: upd.AllowOut, DenyOut: upd.DenyOut, AllowDomains: upd.AllowDomains}
	if err := e.backend.SetNetwork(ctx, id, n); err != nil {
		return fmt.Errorf("updating network: %w", err)
	}
	e.sb.Network, e.sb.AllowInternet = merged, allowInternet
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		return fmt.Errorf("saving network: %w", err)
	}
	return nil
}

// mergeNetwork keeps the create-time public-traffic fields of old and
// takes everything else from upd.
func mergeNetwork(old, upd []byte) ([]byte, error) {
	var o, u map[string]json.RawMessage
	_ = json.Unmarshal(old, &o)
	if err := json.Unmarshal(upd, &u); err != nil && len(bytes.TrimSpace(upd)) > 0 {
		return nil, invalidf("network: %v", err)
	}
	out := map[string]json.RawMessage{}
	for k, v := range u {
		if k != "allow_internet_access" {
			out[k] = v
		}
	}
	for _, k := range []string{"allowPublicTraffic", "maskRequestHost", "httpsPorts"} {
		if v, ok := o[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return json.Marshal(out)
}

// checkDomains refuses domain rules on a server without the egress proxy.
func (m *Manager) checkDomains(cfg NetworkConfig) error {
	if len(cfg.AllowDomains) > 0 && !m.opts.DomainEgress {
		return invalidf("network.allowOut: domain %q: this server runs no egress proxy (see --egress-proxy-port), so it cannot enforce domain rules; use IP addresses or CIDR ranges", cfg.AllowDomains[0])
	}
	return nil
}
