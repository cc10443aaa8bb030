package egressproxy

import (
	"errors"
	"net"
	"time"
)

// DNSRelay answers sandboxes' DNS queries on the gateway by passing them to
// warren's upstream resolver, so a sandbox needs no route to any other
// resolver. Queries are relayed as they are; answers come back the same
// way.
type DNSRelay struct {
	Upstream string // host:port
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
