package egressproxy

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// query builds a DNS query for name (one A question).
func query(name string) []byte {
	q := []byte{0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, l := range splitDots(name) {
		q = append(q, byte(len(l)))
		q = append(q, l...)
	}
	return append(q, 0, 0, 1, 0, 1)
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func TestQuestionName(t *testing.T) {
	if n, ok := questionName(query("api.example.com")); !ok || n != "api.example.com" {
		t.Fatalf("questionName = %q, %v", n, ok)
	}
	for _, bad := range [][]byte{nil, []byte("short"), query("a.b")[:13]} {
		if _, ok := questionName(bad); ok {
			t.Errorf("questionName(%x) accepted", bad)
		}
	}
}

// TestRelayPolicy: a restricted sandbox resolves only its allowed names;
// others get REFUSED without the upstream hearing of them.
func TestRelayPolicy(t *testing.T) {
	up, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	heard := make(chan string, 8)
	go func() {
		buf := make([]byte, 512)
		for {
			n, src, err := up.ReadFrom(buf)
			if err != nil {
				return
			}
			name, _ := questionName(buf[:n])
			heard <- name
			_, _ = up.WriteTo(append([]byte("answer:"), name...), src)
		}
	}()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	relay := &DNSRelay{Upstream: up.LocalAddr().String(), Policy: func(netip.Addr) (bool, []string, bool) {
		return false, []string{"*.example.com"}, true
	}}
	go relay.Serve(pc)
	ask := func(name string) []byte {
		c, err := net.Dial("udp4", pc.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		_, _ = c.Write(query(name))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("asking for %s: %v", name, err)
		}
		return buf[:n]
	}
	if got := string(ask("api.example.com")); got != "answer:api.example.com" {
		t.Errorf("allowed name: %q", got)
	}
	r := ask("secret-data.evil.net")
	if len(r) < 4 || r[3]&0x0f != 5 || r[2]&0x80 == 0 || r[0] != 0xab {
		t.Errorf("denied name: want REFUSED with the query's id, got %x", r)
	}
	select {
	case name := <-heard:
		if name != "api.example.com" {
			t.Errorf("the upstream heard of %q", name)
		}
	default:
		t.Error("the upstream heard nothing")
	}
	select {
	case name := <-heard:
		t.Errorf("the upstream heard of %q", name)
	case <-time.After(100 * time.Millisecond):
	}
}
