package lifecycle

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

func TestNetworkAtCreateAndUpdate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := netip.MustParsePrefix
	policy := netpolicy.Policy{
		Egress:  netpolicy.Egress{AllowInternet: true, DenyOut: []netip.Prefix{p("0.0.0.0/0")}, AllowOut: []netip.Prefix{p("1.2.3.4/32")}},
		Ingress: netpolicy.Ingress{Private: true, MaskRequestHost: "app.local"},
	}
	sb := e.create(t, sandbox.CreateRequest{Network: policy})
	if sb.TrafficAccessToken == "" {
		t.Fatal("a private sandbox must get a traffic token")
	}
	n, _ := e.b.Network(sb.ID)
	if !n.AllowInternet || len(n.DenyOut) != 1 || len(n.AllowOut) != 1 {
		t.Fatalf("backend network at create: %+v", n)
	}
	target, err := e.m.Resolve(e.ctx, sb.ID)
	if err != nil || target.MaskRequestHost != "app.local" || target.TrafficAccessToken != sb.TrafficAccessToken {
		t.Fatalf("Resolve = %+v, %v", target, err)
	}
	upd := netpolicy.Egress{DenyOut: []netip.Prefix{p("10.0.0.0/8")}}
	if err := e.m.UpdateNetwork(e.ctx, sb.ID, upd); err != nil {
		t.Fatal(err)
	}
	n, _ = e.b.Network(sb.ID)
	if n.AllowInternet || len(n.AllowOut) != 0 || len(n.DenyOut) != 1 || n.DenyOut[0].String() != "10.0.0.0/8" {
		t.Fatalf("backend network after update: %+v", n)
	}
	got, _ := e.m.Get(e.ctx, sb.ID)
	if !got.Network.Private || got.Network.MaskRequestHost != "app.local" || len(got.Network.AllowOut) != 0 || got.Network.AllowInternet {
		t.Fatalf("stored network after update: %+v", got.Network)
	}
	// This manager runs no egress proxy: domain rules are refused.
	dom := netpolicy.Egress{AllowDomains: []string{"example.com"}}
	if err := e.m.UpdateNetwork(e.ctx, sb.ID, dom); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "no egress proxy") {
		t.Fatalf("update with a domain: %v", err)
	}
	if _, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute, Network: netpolicy.Policy{Egress: dom}}); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("create with a domain: %v", err)
	}
	if err := e.m.UpdateNetwork(e.ctx, "nosuch", netpolicy.Egress{}); !errdefs.IsNotFound(err) {
		t.Fatalf("update of an unknown sandbox: %v", err)
	}
}

func TestCreateResourcesOverrideTemplate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{CPUCount: 3, MemoryMB: 256})
	if sb.CPUCount != 3 || sb.MemoryMB != 256 {
		t.Fatalf("record: cpu %d, memory %d", sb.CPUCount, sb.MemoryMB)
	}
	st, err := e.b.Stats(e.ctx, sb.ID)
	if err != nil || st.CPUCount != 3 || st.MemoryLimit != 256<<20 {
		t.Fatalf("backend limits: %+v, %v", st, err)
	}
	plain := e.create(t, sandbox.CreateRequest{})
	if plain.CPUCount != 1 || plain.MemoryMB != 128 {
		t.Fatalf("defaults: cpu %d, memory %d", plain.CPUCount, plain.MemoryMB)
	}
}
