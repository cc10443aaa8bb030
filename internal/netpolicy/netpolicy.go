// Package netpolicy is a sandbox's network policy in warren's own terms,
// parsed once from E2B's JSON at the API edge (internal/apiserver) and
// then shared as it is by the manager, the store, the runtime backends and
// the host network: what may leave the sandbox (Egress) and how traffic
// reaches its ports through the proxy (Ingress). It imports nothing of
// ours, so every layer can use it.
package netpolicy

import (
	"net/netip"
	"slices"
)

// Egress is what may leave a sandbox. The JSON names are those of the
// runtime's state records and the store.
type Egress struct {
	// AllowInternet enables NAT egress from the sandbox to outside the host.
	AllowInternet bool `json:"allowInternet"`
	// AllowOut destinations are reachable whatever else says; DenyOut ones
	// are not, unless allowed. Neither reaches the host or other sandboxes.
	AllowOut []netip.Prefix `json:"allowOut,omitempty"`
	DenyOut  []netip.Prefix `json:"denyOut,omitempty"`
	// AllowDomains are allowed names ("example.com", "*.example.com"),
	// lowercase: HTTP and HTTPS connections to them pass the egress proxy
	// where the ranges above would drop them.
	AllowDomains []string `json:"allowDomains,omitempty"`
}

// HasRules reports whether anything beyond the internet switch applies.
func (e Egress) HasRules() bool {
	return len(e.AllowOut) > 0 || len(e.DenyOut) > 0 || len(e.AllowDomains) > 0
}

// Clone returns a copy that shares no slices with e.
func (e Egress) Clone() Egress {
	e.AllowOut, e.DenyOut, e.AllowDomains = slices.Clone(e.AllowOut), slices.Clone(e.DenyOut), slices.Clone(e.AllowDomains)
	return e
}

// Ingress is how the proxy lets traffic reach a sandbox's ports.
type Ingress struct {
	// Private: only requests with the sandbox's traffic access token get
	// through (E2B's allowPublicTraffic: false).
	Private bool `json:"private,omitempty"`
	// MaskRequestHost replaces the Host header towards the sandbox;
	// ${PORT} stands for the port.
	MaskRequestHost string `json:"maskRequestHost,omitempty"`
	// HTTPSPorts are ports whose services the proxy reaches over TLS.
	HTTPSPorts []int `json:"httpsPorts,omitempty"`
}

// Default is the policy of a create that names no network settings, as
// the SDKs' plain Sandbox.create() sends: internet on, nothing else. The
// pools pre-warm with it, so it must be what the API makes of such a
// create (a test in apiserver holds them together).
func Default() Policy { return Policy{Egress: Egress{AllowInternet: true}} }

// Policy is a sandbox's whole network policy. Egress can change while the
// sandbox lives; Ingress is fixed at create.
type Policy struct {
	Egress
	Ingress
}

// Clone returns a copy that shares no slices with p.
func (p Policy) Clone() Policy {
	p.Egress = p.Egress.Clone()
	p.HTTPSPorts = slices.Clone(p.HTTPSPorts)
	return p
}

// IsZero reports whether p says nothing beyond the internet switch.
func (p Policy) IsZero() bool {
	return !p.HasRules() && !p.Private && p.MaskRequestHost == "" && len(p.HTTPSPorts) == 0
}
