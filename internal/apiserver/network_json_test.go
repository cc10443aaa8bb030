package apiserver

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// TestParseNetwork: E2B's SandboxNetworkConfig becomes warren's policy,
// or a 400 that names the field.
func TestParseNetwork(t *testing.T) {
	t.Parallel()
	p := netip.MustParsePrefix
	tests := []struct {
		name, raw string
		want      netpolicy.Policy
		err       string // substring of the 400 message; "" for success
	}{
		{"empty", ``, netpolicy.Policy{}, ""},
		{"null", `null`, netpolicy.Policy{}, ""},
		{"ips and cidrs", `{"allowOut":["1.2.3.4","10.0.0.0/8"],"denyOut":["0.0.0.0/0"]}`,
			netpolicy.Policy{Egress: netpolicy.Egress{AllowOut: []netip.Prefix{p("1.2.3.4/32"), p("10.0.0.0/8")}, DenyOut: []netip.Prefix{p("0.0.0.0/0")}}}, ""},
		{"unmasked cidr", `{"denyOut":["10.1.2.3/8"]}`, netpolicy.Policy{Egress: netpolicy.Egress{DenyOut: []netip.Prefix{p("10.0.0.0/8")}}}, ""},
		{"private with mask", `{"allowPublicTraffic":false,"maskRequestHost":"localhost:${PORT}"}`,
			netpolicy.Policy{Ingress: netpolicy.Ingress{Private: true, MaskRequestHost: "localhost:${PORT}"}}, ""},
		{"public explicitly", `{"allowPublicTraffic":true}`, netpolicy.Policy{}, ""},
		{"domain in allowOut", `{"allowOut":["*.Example.com","1.2.3.4"],"denyOut":["0.0.0.0/0"]}`,
			netpolicy.Policy{Egress: netpolicy.Egress{AllowOut: []netip.Prefix{p("1.2.3.4/32")}, AllowDomains: []string{"*.example.com"}, DenyOut: []netip.Prefix{p("0.0.0.0/0")}}}, ""},
		{"domain in denyOut", `{"denyOut":["example.com"]}`, netpolicy.Policy{}, "only allowOut takes domains"},
		{"garbage entry", `{"allowOut":["not an ip"]}`, netpolicy.Policy{}, "not an IP address or CIDR"},
		{"ipv6", `{"denyOut":["::/0"]}`, netpolicy.Policy{}, "not IPv4"},
		{"egress proxy", `{"egressProxy":{"address":"p:1080"}}`, netpolicy.Policy{}, "egressProxy is not supported"},
		{"rules", `{"rules":{"example.com":[{}]}}`, netpolicy.Policy{}, "rules (header transforms) are not supported"},
		{"bad mask", `{"maskRequestHost":"a b"}`, netpolicy.Policy{}, "not a host name"},
		{"wrong type", `{"allowOut":"1.2.3.4"}`, netpolicy.Policy{}, "decoding"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseNetwork(networkJSON(t, tc.raw, tc.err == "decoding"), false)
			if tc.err == "decoding" {
				return
			}
			if tc.err != "" {
				if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseNetwork(%s) = %v, want a 400 with %q", tc.raw, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got.AllowOut, tc.want.AllowOut) || !slices.Equal(got.DenyOut, tc.want.DenyOut) || !slices.Equal(got.AllowDomains, tc.want.AllowDomains) ||
				got.Private != tc.want.Private || got.MaskRequestHost != tc.want.MaskRequestHost {
				t.Fatalf("parseNetwork(%s) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
			}
		})
	}
}

// TestRenderNetwork: the info's `network` is E2B's shape of the stored
// policy, entries normalised, and parses back to the same policy.
func TestRenderNetwork(t *testing.T) {
	t.Parallel()
	tests := []struct{ given, want string }{
		{``, ``},
		{`{}`, ``},
		{`{"allowPublicTraffic":true}`, ``},
		{`{"denyOut":["0.0.0.0/0"]}`, `{"denyOut":["0.0.0.0/0"]}`},
		{`{"allowOut":["*.Example.com","1.2.3.4","10.1.2.3/8"]}`, `{"allowOut":["1.2.3.4","10.0.0.0/8","*.example.com"]}`},
		{`{"allowPublicTraffic":false,"maskRequestHost":"app:${PORT}","httpsPorts":[8443,8443]}`,
			`{"allowPublicTraffic":false,"httpsPorts":[8443],"maskRequestHost":"app:${PORT}"}`},
	}
	for _, tc := range tests {
		p, err := parseNetwork(networkJSON(t, tc.given, false), true)
		if err != nil {
			t.Fatalf("parseNetwork(%s): %v", tc.given, err)
		}
		var got []byte
		if n := renderNetwork(p); n != nil {
			got, _ = json.Marshal(n)
		}
		if string(got) != tc.want {
			t.Errorf("renderNetwork(parse(%s)) = %s, want %s", tc.given, got, tc.want)
		}
		if again, err := parseNetwork(networkJSON(t, string(got), false), true); err != nil || !slices.Equal(again.AllowOut, p.AllowOut) || !slices.Equal(again.AllowDomains, p.AllowDomains) || again.Ingress.MaskRequestHost != p.MaskRequestHost {
			t.Errorf("%s does not parse back to the same policy: %+v, %v", got, again, err)
		}
	}
}

// networkJSON decodes a request's network as the server does (nil for
// none); with bad, it checks that decoding fails.
func networkJSON(t *testing.T, raw string, bad bool) *rest.SandboxNetwork {
	t.Helper()
	if s := strings.TrimSpace(raw); s == "" || s == "null" {
		return nil
	}
	var n rest.SandboxNetwork
	err := json.Unmarshal([]byte(raw), &n)
	if bad != (err != nil) {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return &n
}

// TestDefaultNetwork: a create that names no network settings gets the
// policy the pools pre-warm with, or the first creates would miss them.
func TestDefaultNetwork(t *testing.T) {
	got, err := parseNetwork(nil, true)
	if err != nil || !reflect.DeepEqual(got, netpolicy.Default()) {
		t.Fatalf("parseNetwork(nil, true) = %+v, %v; want netpolicy.Default() %+v", got, err, netpolicy.Default())
	}
}
