package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/net/netutil"

	"github.com/warren-sandbox/warren/internal/tlsutil"
)

type atomicHandler = atomic.Pointer[http.Handler]

// printReady tells the user exactly what to export for the official SDKs.
func printReady(cfg *Config, addr, key string, generated bool, caPath string) {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if caPath != "" {
		scheme = "https"
	}
	url := scheme + "://" + net.JoinHostPort(host, port)
	w := os.Stdout
	switch cfg.Role {
	case RoleAPI:
		fmt.Fprintf(w, "\nwarren's cluster API is ready on %s (sandboxes run on the nodes in the store)\n\n", url)
	case RoleNode:
		fmt.Fprintf(w, "\nwarren node %s is ready on %s (runtime %s)\n\n", cfg.NodeName, url, cfg.Runtime)
	default:
		fmt.Fprintf(w, "\nwarren is ready on %s (runtime %s)\n\n", url, cfg.Runtime)
	}
	if generated {
		fmt.Fprintln(w, "A new admin API key was generated; it is shown only now:")
	} else {
		fmt.Fprintln(w, "Using the admin API key from WARREN_API_KEY.")
	}
	fmt.Fprintf(w, "\n  export E2B_API_KEY=%s\n", key)
	fmt.Fprintf(w, "  export E2B_API_URL=%s\n", url)
	fmt.Fprintf(w, "  export E2B_SANDBOX_URL=%s\n", url)
	fmt.Fprintf(w, "  export E2B_DOMAIN=%s\n", cfg.Domain)
	fmt.Fprintf(w, "  export E2B_VOLUME_API_URL=%s\n", url)
	if caPath != "" {
		fmt.Fprintf(w, "  export NODE_EXTRA_CA_CERTS=%s\n", caPath)
		fmt.Fprintf(w, "\nWith wildcard DNS for *.%s pointing here, E2B_SANDBOX_URL can be left unset.\n", cfg.Domain)
	}
	fmt.Fprintf(w, "\nDashboard: %s/dashboard/ (sign in with an API key)\n", url)
	fmt.Fprintf(w, "CLI:       warren login --api-url %s\n\n", url)
}

// listen opens the server's listener, wrapped in TLS with --tls. caPath is
// the CA clients must trust, or "" without TLS.
func listen(cfg *Config) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("listening: %w", err)
	}
	if cfg.MaxConnections > 0 {
		// Past the cap, new connections wait in the kernel's backlog: the
		// server's descriptors stay bounded whatever clients do.
		ln = netutil.LimitListener(ln, cfg.MaxConnections)
	}
	if !cfg.TLS {
		return ln, "", nil
	}
	host, _, _ := net.SplitHostPort(cfg.Listen)
	files, err := tlsutil.Ensure(filepath.Join(cfg.DataDir, "tls"), cfg.Domain, host)
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	tc, err := tlsutil.Config(files)
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	return tls.NewListener(ln, tc), files.CACert, nil
}
