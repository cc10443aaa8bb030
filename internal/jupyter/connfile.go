package jupyter

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// connInfo is a Jupyter connection file.
type connInfo struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name"`
}

func (c *connInfo) addr(port int) string {
	return net.JoinHostPort(c.IP, strconv.Itoa(port))
}

// newConnInfo picks five free loopback ports and a fresh key. The ports are
// free only when we look: the kernel may lose a race for one, which Start
// handles by retrying with new ports.
func newConnInfo() (*connInfo, error) {
	ports := make([]int, 5)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	// Holding every listener until all five are picked keeps the ports distinct.
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("picking a free port: %w", err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	var key [32]byte
	_, _ = rand.Read(key[:])
	return &connInfo{
		Transport: "tcp", IP: "127.0.0.1",
		ShellPort: ports[0], IOPubPort: ports[1], StdinPort: ports[2], ControlPort: ports[3], HBPort: ports[4],
		Key: hex.EncodeToString(key[:]), SignatureScheme: "hmac-sha256",
	}, nil
}

// writeConnFile writes info into a new private directory and returns the
// directory and the file's path. The key is a secret: mode 0600.
func writeConnFile(info *connInfo) (dir, path string, err error) {
	dir, err = os.MkdirTemp("", "warren-kernel-")
	if err != nil {
		return "", "", fmt.Errorf("creating connection file directory: %w", err)
	}
	b, err := json.Marshal(info)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", "", fmt.Errorf("encoding connection file: %w", err)
	}
	path = filepath.Join(dir, "kernel.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", "", fmt.Errorf("writing connection file: %w", err)
	}
	return dir, path, nil
}

// tailBuffer keeps the last max bytes written to it: the kernel's own
// stdout/stderr, kept for error messages without growing without bound.
type tailBuffer struct {
	mu  sync.Mutex // guards buf
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.max {
		p = p[len(p)-t.max:]
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		k := copy(t.buf, t.buf[len(t.buf)-t.max:])
		t.buf = t.buf[:k]
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
