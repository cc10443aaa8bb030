package runtimetest

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// Conn is a connection to a sandbox's testinit.
type Conn struct {
	c net.Conn
	r *bufio.Reader
}

// DialInit connects once to testinit in the sandbox at ip.
func DialInit(ip netip.Addr, timeout time.Duration) (*Conn, error) {
	c, err := net.DialTimeout("tcp4", netip.AddrPortFrom(ip, InitPort).String(), timeout)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, r: bufio.NewReader(c)}, nil
}

// WaitInit dials testinit until it accepts or timeout passes.
func WaitInit(ip netip.Addr, timeout time.Duration) (*Conn, error) {
	deadline := time.Now().Add(timeout)
	for {
		c, err := DialInit(ip, 500*time.Millisecond)
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("testinit at %s not listening after %v: %w", ip, timeout, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Call sends one command and returns the answer line.
func (c *Conn) Call(cmd string, timeout time.Duration) (string, error) {
	if err := c.Send(cmd); err != nil {
		return "", err
	}
	return c.Recv(timeout)
}

// Send writes one command line without waiting for the answer.
func (c *Conn) Send(cmd string) error {
	_ = c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := fmt.Fprintln(c.c, cmd)
	return err
}

// Recv reads one answer line.
func (c *Conn) Recv(timeout time.Duration) (string, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(timeout))
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\n"), nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// mustWait waits for the sandbox's testinit and closes the connection with t.
func mustWait(t *testing.T, ip netip.Addr) *Conn {
	t.Helper()
	c, err := WaitInit(ip, listenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// mustCall sends cmd and fails t on a transport error.
func mustCall(t *testing.T, c *Conn, cmd string) string {
	t.Helper()
	out, err := c.Call(cmd, 10*time.Second)
	if err != nil {
		t.Fatalf("testinit %q: %v", cmd, err)
	}
	return out
}
