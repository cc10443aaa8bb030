package network

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/network/nettest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// BenchmarkDomainEgress measures what a domain policy costs a sandbox's
// HTTP traffic to a host-side server: a request on a new connection
// (latency) and a 64 MiB download (throughput), once allowed by address
// (nftables only) and once by name (redirected through the egress proxy).
//
//	go test ./internal/network -run '^$' -bench DomainEgress -benchtime 200x
func BenchmarkDomainEgress(b *testing.B) {
	testutil.RequiresRoot(b)
	outIP, _ := nettest.OutsideHTTP(b)
	o := testOptions(b)
	o.ProxyPort = 14381
	o.Lookup = func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{outIP}, nil }
	o.EgressAllow = []netip.Prefix{netip.PrefixFrom(outIP, 32)}
	m, err := New(b.Context(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		m.Close()
		_ = m.Teardown(context.Background())
	})
	deny := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}
	byIP, err := m.Attach(b.Context(), "byip", netpolicy.Egress{DenyOut: deny, AllowOut: []netip.Prefix{netip.PrefixFrom(outIP, 32)}})
	if err != nil {
		b.Fatal(err)
	}
	byName, err := m.Attach(b.Context(), "byname", netpolicy.Egress{DenyOut: deny, AllowDomains: []string{"bench.test"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = m.Detach(context.Background(), "byip")
		_ = m.Detach(context.Background(), "byname")
	})
	for _, c := range []struct {
		name string
		a    *Attachment
	}{{"allowOut-ip", byIP}, {"allowOut-domain", byName}} {
		b.Run(c.name+"/request", func(b *testing.B) {
			for b.Loop() {
				if n := get(b, c.a.NetnsPath, outIP, "/"); n == 0 {
					b.Fatal("empty answer")
				}
			}
		})
		b.Run(c.name+"/64MiB", func(b *testing.B) {
			b.SetBytes(64 << 20)
			for b.Loop() {
				if n := get(b, c.a.NetnsPath, outIP, "/bulk?mb=64"); n != 64<<20 {
					b.Fatalf("got %d bytes", n)
				}
			}
		})
	}
}

// get makes one request from the netns on a new connection and returns
// the body's length.
func get(b *testing.B, nsPath string, ip netip.Addr, path string) int64 {
	var conn net.Conn
	err := nettest.DoPath(nsPath, func() (err error) {
		conn, err = net.DialTimeout("tcp4", net.JoinHostPort(ip.String(), "80"), 2*time.Second)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: bench.test\r\nConnection: close\r\n\r\n", path)
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, resp.Body)
	return n
}

func bufioReader(c net.Conn) *bufio.Reader { return bufio.NewReaderSize(c, 64<<10) }
