// Package egressproxy enforces sandboxes' domain egress rules at the TCP
// level. nftables redirects a ruled sandbox's HTTP and HTTPS connections
// (those its IP rules would otherwise drop) to this proxy on the host side
// of the bridge. The proxy reads the name the client asks for (TLS SNI or
// HTTP Host), checks it against the sandbox's allowOut domains, and then
// connects to that name itself, resolved by warren: never to the address
// the sandbox chose, so forging a name gains nothing.
package egressproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/netguard"
)

// Policy returns the allowOut domain patterns of the sandbox at src; ok is
// false for an address that is no sandbox's.
type Policy func(src netip.Addr) (domains []string, ok bool)

// Proxy is the transparent egress proxy.
type Proxy struct {
	Policy Policy
	// Resolver resolves allowed names (nil: the host's resolver).
	Resolver *net.Resolver
	// Guard decides which addresses an allowed name may be dialled at,
	// whatever it resolves to: never loopback, link-local, private ranges,
	// the host's own addresses or the sandbox subnet (in Guard.Deny),
	// unless the operator allows a range. nil refuses what netguard
	// refuses by default.
	Guard  *netguard.Guard
	Logger *slog.Logger

	mu sync.Mutex
	ln net.Listener
	wg sync.WaitGroup
	// origPort finds the redirected connection's original port; tests
	// replace it, as their connections are not redirected.
	origPort func(net.Conn) (int, error)
	// Lookup, when set, resolves names instead of Resolver (tests).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// peekTimeout bounds how long a client may take to send its first bytes.
const peekTimeout = 10 * time.Second

// maxPeek bounds the bytes read before the name is known.
const maxPeek = 64 << 10

// Serve accepts redirected connections on ln until Close.
func (p *Proxy) Serve(ln net.Listener) error {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.handle(c)
		}()
	}
}

// Close stops accepting; connections in flight finish on their own.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return nil
	}
	return p.ln.Close()
}

func (p *Proxy) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

func (p *Proxy) handle(c net.Conn) {
	defer c.Close()
	src, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return
	}
	domains, ok := p.Policy(src.Addr().Unmap())
	if !ok {
		return
	}
	find := p.origPort
	if find == nil {
		find = originalPort
	}
	port, err := find(c)
	if err != nil {
		p.logger().Warn("egress proxy: no original destination", "src", src, "err", err)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(peekTimeout))
	var seen bytes.Buffer
	host, isTLS, err := peekName(c, &seen)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil || host == "" {
		p.refuse(c, isTLS, "", "the connection names no host (HTTP Host or TLS SNI)")
		return
	}
	if !Match(host, domains) {
		p.refuse(c, isTLS, host, "not in the sandbox's allowOut domains")
		return
	}
	up, err := p.dial(host, port)
	if err != nil {
		p.refuse(c, isTLS, host, err.Error())
		return
	}
	defer up.Close()
	if _, err := up.Write(seen.Bytes()); err != nil {
		return
	}
	splice(c, up)
}

// refuse ends a connection the policy does not allow: HTTP clients get a
// 403 saying why, TLS clients a closed connection.
func (p *Proxy) refuse(c net.Conn, isTLS bool, host, why string) {
	p.logger().Info("egress refused", "src", c.RemoteAddr().String(), "host", host, "reason", why)
	if isTLS {
		return
	}
	msg := fmt.Sprintf("warren: egress to %q refused: %s\n", host, why)
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
}

// peekName reads the client's first bytes (kept in seen, to replay) and
// returns the host it asks for.
func peekName(c net.Conn, seen *bytes.Buffer) (string, bool, error) {
	r := io.TeeReader(io.LimitReader(c, maxPeek), seen)
	br := bufio.NewReader(r)
	first, err := br.Peek(1)
	if err != nil {
		return "", false, err
	}
	if first[0] == 0x16 { // a TLS handshake record
		return sniOf(br), true, nil
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", false, err
	}
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return host, false, nil
}

// errHello stops a handshake once the ClientHello has been read.
var errHello = errors.New("client hello read")

// sniOf reads a TLS ClientHello from r and returns its server name, using
// crypto/tls's own parser on a connection that can only be read.
func sniOf(r io.Reader) string {
	var name string
	conn := tls.Server(readOnlyConn{r: r}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name = h.ServerName
			return nil, errHello
		},
	})
	_ = conn.Handshake()
	return name
}

type readOnlyConn struct {
	net.Conn
	r io.Reader
}

func (c readOnlyConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c readOnlyConn) Write(p []byte) (int, error)      { return 0, io.ErrClosedPipe }
func (c readOnlyConn) Close() error                     { return nil }
func (c readOnlyConn) SetDeadline(time.Time) error      { return nil }
func (c readOnlyConn) SetReadDeadline(time.Time) error  { return nil }
func (c readOnlyConn) SetWriteDeadline(time.Time) error { return nil }
func (c readOnlyConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c readOnlyConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }

// dial connects to host:port at an address warren resolved, skipping the
// addresses no sandbox may reach through the proxy.
func (p *Proxy) dial(host string, port int) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lookup := p.Lookup
	if lookup == nil {
		res := p.Resolver
		if res == nil {
			res = net.DefaultResolver
		}
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) { return res.LookupNetIP(ctx, "ip4", host) }
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	var lastErr error = fmt.Errorf("%s has no address a sandbox may reach", host)
	for _, a := range addrs {
		if !p.reachable(a.Unmap()) {
			continue
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.Unmap().String(), strconv.Itoa(port)))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func (p *Proxy) reachable(a netip.Addr) bool {
	if !a.Is4() {
		return false // sandboxes have no IPv6 egress
	}
	g := p.Guard
	if g == nil {
		g = &netguard.Guard{}
	}
	return g.Permitted(a)
}

// splice copies both ways until both sides are done.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// originalPort is the port the sandbox connected to before nftables
// redirected it (SO_ORIGINAL_DST).
func originalPort(c net.Conn) (int, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return 0, errors.New("not a TCP connection")
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var port int
	var serr error
	err = raw.Control(func(fd uintptr) {
		// SO_ORIGINAL_DST (80) fills a sockaddr_in; GetsockoptIPv6Mreq
		// reads 16 bytes, which is its size.
		m, e := unix.GetsockoptIPv6Mreq(int(fd), unix.IPPROTO_IP, 80)
		if e != nil {
			serr = e
			return
		}
		port = int(m.Multiaddr[2])<<8 | int(m.Multiaddr[3])
	})
	if err != nil {
		return 0, err
	}
	return port, serr
}

// Match reports whether host is allowed by patterns: "example.com" allows
// that name, "*.example.com" every name below it (not example.com itself).
func Match(host string, patterns []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSuffix(p, "."))
		if suffix, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == p {
			return true
		}
	}
	return false
}
