package oci

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/network/nettest"
	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// BenchmarkEgress measures a connection from inside a runc sandbox to a
// server outside the host (a netns of the benchmark's own), round trip
// through the sandbox's init: with internet access only (the baseline),
// and with egress rules that the connection's first packet must pass (a
// deny list of 500 ranges before the allowed one). Divide ns/op by the
// baseline's for the rules' cost.
//
//	sudo go test -run '^$' -bench Egress ./internal/runtime/oci/
func BenchmarkEgress(b *testing.B) {
	testutil.RequiresRoot(b)
	bin := testutil.RequiresRunc(b)
	outside := nettest.Outside(b)
	var deny []netip.Prefix
	for i := range 500 {
		// TEST-NET-3 style ranges, listed only: never contacted.
		deny = append(deny, netip.PrefixFrom(netip.AddrFrom4([4]byte{203, 0, byte(i >> 8), byte(i)}), 32))
	}
	cases := []struct {
		name string
		n    netpolicy.Egress
	}{
		{"baseline-internet-only", netpolicy.Egress{AllowInternet: true}},
		{"deny-500-ranges", netpolicy.Egress{AllowInternet: true, DenyOut: deny}},
		{"deny-all-allow-one", netpolicy.Egress{DenyOut: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, AllowOut: []netip.Prefix{netip.PrefixFrom(outside.Addr(), 32)}}},
	}
	e := newEnv(b, Runc, bin)
	fx := runtimetest.NewFixture(b)
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			id := runtimetest.NewID()
			spec := specFor(fx, id)
			spec.Network = tc.n
			inst, err := e.b.Create(context.Background(), spec)
			if err != nil {
				b.Fatal(err)
			}
			defer e.b.Destroy(context.Background(), id)
			c, err := runtimetest.WaitInit(inst.IP, 20*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			cmd := fmt.Sprintf("dial %s", outside)
			b.ResetTimer()
			for range b.N {
				out, err := c.Call(cmd, 5*time.Second)
				if err != nil || out != "ok "+nettest.OutsideGreeting {
					b.Fatalf("dial: %q, %v", out, err)
				}
			}
		})
	}
}
