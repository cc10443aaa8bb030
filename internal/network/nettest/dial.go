package nettest

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// DialFrom connects from the netns pinned at nsPath (the host's when empty)
// to addr and returns the first line the server sends.
func DialFrom(nsPath string, addr netip.AddrPort, timeout time.Duration) (string, error) {
	return DialFromAs(nsPath, netip.Addr{}, addr, timeout)
}

// DialFromAs is DialFrom with the connection's source address set to src
// (any address of the netns when src is the zero Addr).
func DialFromAs(nsPath string, src netip.Addr, addr netip.AddrPort, timeout time.Duration) (string, error) {
	var conn net.Conn
	dial := func() (err error) {
		d := net.Dialer{Timeout: timeout}
		if src.IsValid() {
			d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
		}
		conn, err = d.Dial("tcp4", addr.String())
		return err
	}
	var err error
	if nsPath == "" {
		err = dial()
	} else {
		err = DoPath(nsPath, dial)
	}
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading greeting from %s: %w", addr, err)
	}
	return strings.TrimSpace(line), nil
}

// GreetIn listens on ip:0 inside the netns pinned at nsPath (the host's when
// empty) and greets every connection with greeting; it returns the address.
func GreetIn(t testing.TB, nsPath string, ip netip.Addr, greeting string) netip.AddrPort {
	t.Helper()
	var ln net.Listener
	listen := func() (err error) {
		ln, err = net.Listen("tcp4", net.JoinHostPort(ip.String(), "0"))
		return err
	}
	var err error
	if nsPath == "" {
		err = listen()
	} else {
		err = DoPath(nsPath, listen)
	}
	if err != nil {
		t.Fatalf("listening on %s in %q: %v", ip, nsPath, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, greeting)
			c.Close()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}
