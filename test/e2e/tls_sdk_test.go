package e2e

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// tlsSDKAddr is where TestTLSHostRoutingSDK's server listens: the SDK
// builds https URLs without a port, so the server must be on 443, and a
// loopback address of its own keeps it clear of anything on 127.0.0.1.
const tlsSDKAddr = "127.0.0.2:443"

// TestTLSHostRoutingSDK drives the official SDK against `warren serve
// --tls` through its domain only, as a user with wildcard DNS would:
// commands, files, getHost over https and auto-resume by traffic. The
// names resolve to the server through a node preload (tls/resolve.mjs),
// the CA through NODE_EXTRA_CA_CERTS.
func TestTLSHostRoutingSDK(t *testing.T) {
	cfg := loadConfig(t)
	if ln, err := net.Listen("tcp", tlsSDKAddr); err != nil {
		t.Skipf("cannot listen on %s: %v", tlsSDKAddr, err)
	} else {
		ln.Close()
	}
	cfg.domain = "warren.test"
	s := launchServer(t, cfg, serverOpts{index: 41, runtime: cfg.runtimes[0], tls: true, listen: tlsSDKAddr})
	for _, pkg := range cfg.sdks {
		t.Run(pkg, func(t *testing.T) { runTLSNode(t, cfg, s, pkg, "tls/hostrouting.test.mjs") })
	}
	// The oldest releases read no E2B_API_URL, so they run here, through
	// the domain only: the core flows, with the calls both lines have.
	for _, pkg := range oldestSDKs {
		t.Run(pkg, func(t *testing.T) { runTLSNode(t, cfg, s, pkg, "compat/oldest.test.mjs") })
	}
}

// oldestSDKs are the oldest official SDK releases warren supports: the
// first 2.x and the last 1.x the npm registry serves (package.json aliases).
var oldestSDKs = []string{"e2b-v201", "e2b-v1"}

// runTLSNode runs one node test file with SDK pkg against s, found through
// its domain only.
func runTLSNode(t *testing.T, cfg config, s *server, pkg, file string) {
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout(t, cfg))
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--import", "./tls/resolve.mjs",
		"--test", "--test-force-exit", "--test-reporter=spec", file)
	cmd.Dir = cfg.e2eDir
	cmd.Env = append(environWithout("E2B_", "E2E_", "NODE_EXTRA_CA_CERTS"),
		"E2E_SDK="+pkg,
		"E2B_API_KEY="+s.apiKey,
		"E2B_DOMAIN="+cfg.domain,
		"WARREN_TLS_DOMAIN="+cfg.domain,
		"WARREN_TLS_ADDR=127.0.0.2",
		"NODE_EXTRA_CA_CERTS="+filepath.Join(s.dataDir, "tls", "ca.pem"),
	)
	cmd.WaitDelay = 10 * time.Second
	out := &lineLog{t: t, live: testing.Verbose()}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		out.flush()
		if !out.live {
			t.Log(out.String())
		}
		t.Fatalf("node --test %s with %s: %v", file, pkg, err)
	}
	out.flush()
}
