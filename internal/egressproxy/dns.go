package egressproxy

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"
)

// DNSRelay answers sandboxes' DNS queries on the gateway by passing them to
// warren's upstream resolver, so a sandbox needs no route to any other
// resolver. A sandbox whose egress is restricted may only ask for the
// names its allowOut domains allow: anything else is answered REFUSED
// here, so DNS cannot carry data out of a sandbox that may not send any.
type DNSRelay struct {
	Upstream string // host:port
	// Policy says what the sandbox at src may resolve: everything, or
	// the names domains match; ok is false for an unknown address.
	Policy func(src netip.Addr) (all bool, domains []string, ok bool)
}

// maxInflight bounds concurrent queries.
const maxInflight = 256

// Serve relays queries arriving on pc until it is closed.
func (d *DNSRelay) Serve(pc net.PacketConn) error {
	sem := make(chan struct{}, maxInflight)
	buf := make([]byte, 65535)
	for {
		n, src, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		q := append([]byte(nil), buf[:n]...)
		if !d.allowed(src, q) {
			if r := refused(q); r != nil {
				_, _ = pc.WriteTo(r, src)
			}
			continue
		}
		select {
		case sem <- struct{}{}:
		default:
			continue // overloaded: the client retries
		}
		go func() {
			defer func() { <-sem }()
			if ans, err := d.exchange(q); err == nil {
				_, _ = pc.WriteTo(ans, src)
			}
		}()
	}
}

func (d *DNSRelay) exchange(q []byte) ([]byte, error) {
	c, err := net.DialTimeout("udp", d.Upstream, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(q); err != nil {
		return nil, err
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// allowed applies the policy to a query.
func (d *DNSRelay) allowed(src net.Addr, q []byte) bool {
	if d.Policy == nil {
		return true
	}
	ua, ok := src.(*net.UDPAddr)
	if !ok {
		return false
	}
	addr, _ := netip.AddrFromSlice(ua.IP)
	all, domains, known := d.Policy(addr.Unmap())
	if !known {
		return false
	}
	if all {
		return true
	}
	name, ok := questionName(q)
	return ok && Match(name, domains)
}

// questionName reads the name of a query's single question.
func questionName(q []byte) (string, bool) {
	if len(q) < 12 || q[2]&0x80 != 0 || q[4] != 0 || q[5] != 1 {
		return "", false // not a query with one question
	}
	var labels []string
	for i := 12; i < len(q); {
		l := int(q[i])
		switch {
		case l == 0:
			return strings.Join(labels, "."), len(labels) > 0
		case l > 63 || i+1+l > len(q):
			return "", false // compression or truncation: not in a question
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	return "", false
}

// refused is the REFUSED answer to query q, echoing its question.
func refused(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	r := append([]byte(nil), q...)
	r[2] = 0x80 | q[2]&0x79 // QR, keep opcode and RD
	r[3] = 5                // RCODE REFUSED
	r[6], r[7], r[8], r[9], r[10], r[11] = 0, 0, 0, 0, 0, 0
	return r
}
