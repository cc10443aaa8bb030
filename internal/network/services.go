package network

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"

	"github.com/warren-sandbox/warren/internal/egressproxy"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netguard"
)

// startServices opens what the gateway offers sandboxes: the DNS relay and
// the egress proxy, each when configured.
func (m *Manager) startServices(ctx context.Context) error {
	gw := m.ipam.Gateway().String()
	logger := log.G(ctx)
	if m.opts.DNSUpstream != "" {
		pc, err := net.ListenPacket("udp4", net.JoinHostPort(gw, "53"))
		if err != nil {
			return fmt.Errorf("DNS relay on %s:53: %w", gw, err)
		}
		m.closers = append(m.closers, pc)
		relay := &egressproxy.DNSRelay{Upstream: m.opts.DNSUpstream, Policy: m.dnsPolicy}
		go func() {
			if err := relay.Serve(pc); err != nil {
				logger.Error("DNS relay stopped", "err", err)
			}
		}()
	}
	if m.opts.ProxyPort == 0 {
		return nil
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort(gw, strconv.Itoa(m.opts.ProxyPort)))
	if err != nil {
		m.Close()
		return fmt.Errorf("egress proxy on %s:%d: %w", gw, m.opts.ProxyPort, err)
	}
	p := &egressproxy.Proxy{
		Policy: m.domainsFor,
		Guard:  &netguard.Guard{Allow: m.opts.EgressAllow, Deny: []netip.Prefix{m.opts.Subnet}},
		Logger: logger,
		Lookup: m.opts.Lookup,
	}
	if m.opts.DNSUpstream != "" && p.Lookup == nil {
		p.Resolver = upstreamResolver(m.opts.DNSUpstream)
	}
	m.closers = append(m.closers, p)
	go func() {
		if err := p.Serve(ln); err != nil {
			logger.Error("egress proxy stopped", "err", err)
		}
	}()
	return nil
}

// upstreamResolver resolves through addr only, as the relay does.
func upstreamResolver(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// domainsFor is the proxy's policy: the allowOut domains of the sandbox
// with address ip.
func (m *Manager) domainsFor(ip netip.Addr) ([]string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.attached {
		if a != nil && a.IP == ip {
			return a.Egress.AllowDomains, true
		}
	}
	return nil, false
}

// dnsPolicy is the DNS relay's policy: a sandbox that may reach the
// internet resolves anything; one that may not (no internet, or a denyOut
// of everything) only the names its allowOut domains allow.
func (m *Manager) dnsPolicy(ip netip.Addr) (all bool, domains []string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.attached {
		if a == nil || a.IP != ip {
			continue
		}
		e := a.Egress
		restricted := !e.AllowInternet
		for _, d := range e.DenyOut {
			restricted = restricted || d.Bits() == 0
		}
		return !restricted, e.AllowDomains, true
	}
	return false, nil, false
}

// Close stops the gateway services. Sandboxes keep their network; the
// next manager (after a restart) opens the services again.
func (m *Manager) Close() error {
	var errs []error
	for _, c := range m.closers {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	m.closers = nil
	return errors.Join(errs...)
}

var _ io.Closer = (*egressproxy.Proxy)(nil)
