package sandbox

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

func TestParseNetwork(t *testing.T) {
	t.Parallel()
	p := netip.MustParsePrefix
	tests := []struct {
		name, raw string
		want      NetworkConfig
		err       string // substring of the 400 message; "" for success
	}{
		{"empty", ``, NetworkConfig{}, ""},
		{"null", `null`, NetworkConfig{}, ""},
		{"ips and cidrs", `{"allowOut":["1.2.3.4","10.0.0.0/8"],"denyOut":["0.0.0.0/0"]}`,
			NetworkConfig{AllowOut: []netip.Prefix{p("1.2.3.4/32"), p("10.0.0.0/8")}, DenyOut: []netip.Prefix{p("0.0.0.0/0")}}, ""},
		{"unmasked cidr", `{"denyOut":["10.1.2.3/8"]}`, NetworkConfig{DenyOut: []netip.Prefix{p("10.0.0.0/8")}}, ""},
		{"private with mask", `{"allowPublicTraffic":false,"maskRequestHost":"localhost:${PORT}"}`,
			NetworkConfig{Private: true, MaskRequestHost: "localhost:${PORT}"}, ""},
		{"public explicitly", `{"allowPublicTraffic":true}`, NetworkConfig{}, ""},
		{"domain in allowOut", `{"allowOut":["*.Example.com","1.2.3.4"],"denyOut":["0.0.0.0/0"]}`,
			NetworkConfig{AllowOut: []netip.Prefix{p("1.2.3.4/32")}, AllowDomains: []string{"*.example.com"}, DenyOut: []netip.Prefix{p("0.0.0.0/0")}}, ""},
		{"domain in denyOut", `{"denyOut":["example.com"]}`, NetworkConfig{}, "only allowOut takes domains"},
		{"garbage entry", `{"allowOut":["not an ip"]}`, NetworkConfig{}, "not an IP address or CIDR"},
		{"ipv6", `{"denyOut":["::/0"]}`, NetworkConfig{}, "not IPv4"},
		{"egress proxy", `{"egressProxy":{"address":"p:1080"}}`, NetworkConfig{}, "egressProxy is not supported"},
		{"rules", `{"rules":{"example.com":[{}]}}`, NetworkConfig{}, "rules (header transforms) are not supported"},
		{"bad mask", `{"maskRequestHost":"a b"}`, NetworkConfig{}, "not a host name"},
		{"wrong type", `{"allowOut":"1.2.3.4"}`, NetworkConfig{}, "network:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseNetwork([]byte(tc.raw))
			if tc.err != "" {
				if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseNetwork(%s) = %v, want a 400 with %q", tc.raw, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got.AllowOut, tc.want.AllowOut) || !slices.Equal(got.DenyOut, tc.want.DenyOut) || !slices.Equal(got.AllowDomains, tc.want.AllowDomains) ||
				got.Private != tc.want.Private || got.MaskRequestHost != tc.want.MaskRequestHost {
				t.Fatalf("ParseNetwork(%s) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
			}
		})
	}
}

func TestNetworkAtCreateAndUpdate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	raw := json.RawMessage(`{"allowPublicTraffic":false,"maskRequestHost":"app.local","denyOut":["0.0.0.0/0"],"allowOut":["1.2.3.4"]}`)
	sb := e.create(t, CreateRequest{AllowInternet: true, Network: raw})
	if sb.TrafficAccessToken == "" {
		t.Fatal("allowPublicTraffic:false must mint a traffic token")
	}
	n, _ := e.b.Network(sb.ID)
	if !n.AllowInternet || len(n.DenyOut) != 1 || len(n.AllowOut) != 1 {
		t.Fatalf("backend network at create: %+v", n)
	}
	target, err := e.m.Resolve(e.ctx, sb.ID)
	if err != nil || target.MaskRequestHost != "app.local" || target.TrafficAccessToken != sb.TrafficAccessToken {
		t.Fatalf("Resolve = %+v, %v", target, err)
	}
	if err := e.m.UpdateNetwork(e.ctx, sb.ID, []byte(`{"denyOut":["10.0.0.0/8"]}`), false); err != nil {
		t.Fatal(err)
	}
	n, _ = e.b.Network(sb.ID)
	if n.AllowInternet || len(n.AllowOut) != 0 || len(n.DenyOut) != 1 || n.DenyOut[0].String() != "10.0.0.0/8" {
		t.Fatalf("backend network after update: %+v", n)
	}
	got, _ := e.m.Get(e.ctx, sb.ID)
	var stored map[string]any
	_ = json.Unmarshal(got.Network, &stored)
	if stored["allowPublicTraffic"] != false || stored["maskRequestHost"] != "app.local" || stored["allowOut"] != nil || got.AllowInternet {
		t.Fatalf("stored network after update: %s (internet %v)", got.Network, got.AllowInternet)
	}
	// This manager runs no egress proxy: domain rules are refused.
	if err := e.m.UpdateNetwork(e.ctx, sb.ID, []byte(`{"allowOut":["example.com"]}`), true); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "no egress proxy") {
		t.Fatalf("update with a domain: %v", err)
	}
	if err := e.m.UpdateNetwork(e.ctx, "nosuch", []byte(`{}`), true); !errdefs.IsNotFound(err) {
		t.Fatalf("update of an unknown sandbox: %v", err)
	}
	if _, err := e.m.Create(e.ctx, CreateRequest{TemplateID: "base", Timeout: time.Minute, Network: []byte(`{"denyOut":["x"]}`)}); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("create with a bad network: %v", err)
	}
}

func TestCreateResourcesOverrideTemplate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, CreateRequest{CPUCount: 3, MemoryMB: 256})
	if sb.CPUCount != 3 || sb.MemoryMB != 256 {
		t.Fatalf("record: cpu %d, memory %d", sb.CPUCount, sb.MemoryMB)
	}
	st, err := e.b.Stats(e.ctx, sb.ID)
	if err != nil || st.CPUCount != 3 || st.MemoryLimit != 256<<20 {
		t.Fatalf("backend limits: %+v, %v", st, err)
	}
	plain := e.create(t, CreateRequest{})
	if plain.CPUCount != 1 || plain.MemoryMB != 128 {
		t.Fatalf("defaults: cpu %d, memory %d", plain.CPUCount, plain.MemoryMB)
	}
}
