package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/warren-sandbox/warren/internal/admission"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/telemetry"
)

// setup builds everything sandboxes need: the network, the runtime backends
// and the base template, the queue starts wait in, then the manager, which re-adopts what a previous
// run left behind. On a node it boots templates from its own layers.
func setup(ctx context.Context, cfg *Config, st store.Store, metrics *telemetry.Registry, evs sandbox.EventRecorder, layers *nodeLayers, vols lifecycle.Volumes) (*machine, *network.Manager, *admission.Queue, error) {
	subnet, err := netip.ParsePrefix(cfg.Subnet)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--subnet: %w", err)
	}
	netMgr, err := network.New(ctx, network.Options{
		Bridge: cfg.Bridge, Subnet: subnet,
		// One nftables table per bridge, so two servers with their own
		// bridges (as the end-to-end tests run them) never replace each
		// other's rules.
		Table:       cfg.Bridge,
		ProxyPort:   cfg.EgressProxyPort,
		DNSUpstream: dnsUpstream(ctx, cfg.DNSUpstream),
		EgressAllow: cfg.EgressAllow,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("setting up the sandbox network: %w", err)
	}
	backends, err := newBackends(ctx, cfg, netMgr)
	if err != nil {
		return nil, nil, nil, err
	}
	// With every backend's sandboxes re-reserved, what is left on the
	// bridge belongs to no sandbox (a crash mid-create): remove it.
	if removed, err := netMgr.Sweep(ctx); err != nil {
		log.G(ctx).Warn("sweeping leaked sandbox network state", "err", err)
	} else if len(removed) > 0 {
		log.G(ctx).Info("removed leaked sandbox network state", "items", removed)
	}
	if err := ensureTemplates(ctx, cfg, st); err != nil {
		return nil, nil, nil, err
	}
	starts := newStarts(cfg, backends, metrics)
	metrics.RegisterStarts(starts.Stats)
	mgr, err := lifecycle.New(lifecycle.Options{
		Store: st,
		// The manager's timers and background work end with the server's
		// run (shutdown cancels and waits for them).
		Base:            ctx,
		Backends:        backends,
		DefaultBackend:  cfg.Runtime,
		EnvdPath:        cfg.EnvdPath,
		Binds:           interpreterBinds(cfg),
		DefaultCPUCount: cfg.CPUCount,
		DefaultMemoryMB: cfg.MemoryMB,
		DefaultDiskMB:   cfg.DiskMB,
		MaxTimeout:      cfg.MaxTimeout,
		CheckpointAfter: cfg.CheckpointAfter,
		PollOOMGuard:    cfg.OOMGuardPoll,
		SnapshotDir:     snapshotDir(cfg),
		DomainEgress:    cfg.EgressProxyPort > 0,
		Quota:           teamQuotas{st, cfg.TeamQuotas}.sandboxes,
		HostMemoryMB:    lifecycle.MemAvailableMB,
		Starts:          starts,
		HostDiskFreeMB:  func() (int, error) { return lifecycle.DiskFreeMB(cfg.DataDir) },
		ObserveOp:       metrics.ObserveOp,
		Events:          evs,
		NodeName:        nodeName(cfg),
		LocalTemplate:   layers.localTemplate(),
		Volumes:         vols,
		TemplateHints:   templateHints(cfg),
	})
	if err != nil {
		return nil, nil, nil, err
	}
	m := withRooms(mgr, cfg, st, parkOptions(cfg, st, evs))
	if err := mgr.Reconcile(ctx); err != nil {
		return nil, nil, nil, fmt.Errorf("re-adopting sandboxes: %w", err)
	}
	return m, netMgr, starts, nil
}

// newBackends makes every backend whose binary is installed; the default
// one must be among them.
func newBackends(ctx context.Context, cfg *Config, netMgr *network.Manager) (map[string]runtime.Backend, error) {
	out := map[string]runtime.Backend{}
	for _, kind := range backendKinds {
		bin, err := exec.LookPath(kind.binary)
		if err != nil {
			if kind.name == cfg.Runtime {
				return nil, fmt.Errorf("runtime %s is not installed (run scripts/setup.sh): %w", kind.name, err)
			}
			log.G(ctx).Warn("runtime not installed; templates that ask for it cannot start", "runtime", kind.name)
			continue
		}
		b, err := kind.open(ctx, cfg, bin, netMgr)
		if err != nil {
			if kind.name == cfg.Runtime {
				return nil, fmt.Errorf("starting runtime %s: %w", kind.name, err)
			}
			log.G(ctx).Warn("runtime unusable; templates that ask for it cannot start", "runtime", kind.name, "err", err)
			continue
		}
		out[kind.name] = b
	}
	return out, nil
}

// runRoot keeps the runtimes' own state apart per data dir, so two servers
// on one host never see each other's containers.
func runRoot(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join("/run/warren", hex.EncodeToString(sum[:6]))
}

// removeEmptyRunRoot removes the runtimes' state dirs under root, and root,
// where they are empty: a server that stops with no sandbox leaves nothing
// in /run/warren (one dir per data dir ever used, otherwise). Anything a
// runtime left there stays for the next start to settle.
func removeEmptyRunRoot(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			_ = os.Remove(filepath.Join(root, e.Name())) // fails unless empty
		}
	}
	_ = os.Remove(root)
}

// interpreterBinds places the code interpreter server in every sandbox; only
// templates whose start command runs it use it.
func interpreterBinds(cfg *Config) []runtime.Bind {
	if !cfg.CodeInterpreter {
		return nil
	}
	return []runtime.Bind{{Source: cfg.InterpreterPath, Target: interpreterTarget}}
}

// dnsUpstream is the resolver sandboxes' DNS goes to: --dns-upstream, or
// the host's first nameserver; "" (none, or --dns-upstream=off) leaves
// sandboxes without DNS.
func dnsUpstream(ctx context.Context, flag string) string {
	switch flag {
	case "off":
		return ""
	case "":
	default:
		if _, _, err := net.SplitHostPort(flag); err != nil {
			return net.JoinHostPort(flag, "53")
		}
		return flag
	}
	data, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "nameserver" {
			if a, err := netip.ParseAddr(f[1]); err == nil && a.Is4() {
				return net.JoinHostPort(a.String(), "53")
			}
		}
	}
	log.G(ctx).Warn("no usable nameserver in /etc/resolv.conf: sandboxes get no DNS (set --dns-upstream)")
	return ""
}
