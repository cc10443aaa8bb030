package network

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/network/nettest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestDomainEgress: a sandbox denied everything but two allowOut names
// reaches them over HTTP (Host) and HTTPS (SNI) through the egress proxy,
// at the address warren resolves, and nothing else; the rules change live;
// its DNS queries go to warren's upstream through the gateway.
func TestDomainEgress(t *testing.T) {
	testutil.RequiresRoot(t)
	outIP, greet := nettest.OutsideHTTP(t)
	upstream := fakeDNS(t)
	o := testOptions(t)
	o.ProxyPort = 14380
	o.DNSUpstream = upstream
	o.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{outIP}, nil // every name is the outside server
	}
	// The outside server has a private address, which the proxy refuses
	// unless the operator allows its range (TestDomainEgressRefusesInternal).
	o.EgressAllow = []netip.Prefix{netip.PrefixFrom(outIP, 32)}
	m := newTestManagerWith(t, o)
	a, err := m.Attach(t.Context(), "dom", netpolicy.Egress{DenyOut: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, AllowDomains: []string{"allowed.test", "*.wild.test"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Detach(context.Background(), "dom") })
	// The sandbox dials an address of its choosing (here a TEST-NET one
	// no server has): the proxy must connect by name, not to it.
	decoy := netip.MustParseAddr("192.0.2.77")
	tests := []struct {
		url, want string // want "" = no answer
	}{
		{"http://allowed.test/", "outside http allowed.test"},
		{"http://api.wild.test/x", "outside http api.wild.test"},
		{"http://denied.test/", "403"},
		{"http://wild.test/", "403"},
		{"https://allowed.test/", "outside https allowed.test"},
		{"https://denied.test/", ""},
	}
	if out, err := exec.Command("nft", "list", "table", "inet", o.Table).CombinedOutput(); err == nil && testing.Verbose() {
		t.Logf("ruleset:\n%s", out)
	}
	for _, tc := range tests {
		got := fetchFrom(t, a.NetnsPath, decoy, tc.url)
		if !strings.Contains(got, tc.want) || (tc.want == "" && got != "") {
			t.Errorf("%s from the sandbox = %q, want %q", tc.url, got, tc.want)
		}
	}
	if got, err := nettest.DialFrom(a.NetnsPath, greet, dialTimeout); err == nil {
		t.Errorf("a port other than 80/443 was reachable: %q", got)
	}
	if got := dnsFrom(t, a.NetnsPath, m.Gateway(), "allowed.test"); got != "answer from upstream" {
		t.Errorf("DNS for an allowed name through the gateway = %q", got)
	}
	if got := dnsFrom(t, a.NetnsPath, m.Gateway(), "exfil.evil.test"); got != "refused" {
		t.Errorf("DNS for a name not allowed = %q, want refused", got)
	}
	// Rules change live: without domains nothing goes through.
	if err := m.SetEgress(t.Context(), "dom", netpolicy.Egress{DenyOut: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}); err != nil {
		t.Fatal(err)
	}
	if got := fetchFrom(t, a.NetnsPath, outIP, "http://allowed.test/"); got != "" {
		t.Errorf("after the domains were removed: %q", got)
	}
}

// fetchFrom GETs url from the netns, connecting to ip whatever the name,
// and returns the status ("403") or body, "" when nothing answered.
func fetchFrom(t *testing.T, nsPath string, ip netip.Addr, url string) string {
	t.Helper()
	port := "80"
	if strings.HasPrefix(url, "https") {
		port = "443"
	}
	// The socket is made in the netns (a goroutine of the client's own
	// would dial from the host's); the client then only uses it.
	var conn net.Conn
	err := nettest.DoPath(nsPath, func() (err error) {
		conn, err = net.DialTimeout("tcp4", net.JoinHostPort(ip.String(), port), time.Second)
		return err
	})
	if err != nil {
		return ""
	}
	defer conn.Close()
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		DialContext:     func(context.Context, string, string) (net.Conn, error) { return conn, nil },
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	resp, err := c.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return resp.Status[:3]
	}
	return string(b)
}

// fakeDNS is a UDP "resolver" on loopback answering every datagram with a
// fixed text: the relay passes bytes through unchanged.
func fakeDNS(t *testing.T) string {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			_, src, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte("answer from upstream"), src)
		}
	}()
	return pc.LocalAddr().String()
}

func dnsFrom(t *testing.T, nsPath string, gw netip.Addr, name string) string {
	var got string
	_ = nettest.DoPath(nsPath, func() error {
		c, err := net.DialTimeout("udp4", net.JoinHostPort(gw.String(), "53"), time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		q := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
		for _, l := range strings.Split(name, ".") {
			q = append(append(q, byte(len(l))), l...)
		}
		_, _ = c.Write(append(q, 0, 0, 1, 0, 1))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		switch {
		case err != nil:
		case n >= 4 && buf[3]&0x0f == 5:
			got = "refused"
		default:
			got = string(buf[:n])
		}
		return nil
	})
	return got
}

// TestDomainEgressRefusesInternal: an allowed name that resolves to an
// internal address (here the outside server's private one) is not
// connected to, until the operator allows that range.
func TestDomainEgressRefusesInternal(t *testing.T) {
	testutil.RequiresRoot(t)
	outIP, _ := nettest.OutsideHTTP(t)
	o := testOptions(t)
	o.ProxyPort = 14382
	o.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{outIP}, nil
	}
	m := newTestManagerWith(t, o)
	a, err := m.Attach(t.Context(), "internal", netpolicy.Egress{DenyOut: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, AllowDomains: []string{"allowed.test"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Detach(context.Background(), "internal") })
	for _, url := range []string{"http://allowed.test/", "https://allowed.test/"} {
		want := ""
		if strings.HasPrefix(url, "http:") {
			want = "403"
		}
		if got := fetchFrom(t, a.NetnsPath, outIP, url); got != want {
			t.Errorf("%s resolving to the private %s = %q, want %q", url, outIP, got, want)
		}
	}
}
