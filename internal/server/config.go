// Package server wires `warren serve` together: the store, the listener,
// the sandbox network, the runtime backends, the built-in templates, the
// sandbox manager, the template builder, the REST API and the proxy. The
// command only parses flags into a Config; everything that runs is here.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres"
)

// DefaultDataDir is where a server keeps its state unless told otherwise.
const DefaultDataDir = "/var/lib/warren"

// DBFile is the SQLite database's name inside the data dir.
const DBFile = "warren.db"

// Config is everything `warren serve`'s flags set.
type Config struct {
	Listen   string
	DataDir  string
	CacheDir string
	// Store is the database (--store): "" for SQLite in DataDir, or a
	// postgres:// URL.
	Store string
	// EgressProxyPort and DNSUpstream configure the gateway's services.
	EgressProxyPort int
	DNSUpstream     string
	DiskQuota       bool
	// Runtime is the default backend, one of Backends' names.
	Runtime    string
	Domain     string
	Subnet     string
	Bridge     string
	EnvdPath   string
	MaxTimeout time.Duration
	// CheckpointAfter: a paused sandbox on a backend that checkpoints
	// (runsc) stays frozen in memory this long, then goes to disk.
	CheckpointAfter time.Duration
	// MetricsRetention: a killed sandbox's metrics history stays this long.
	MetricsRetention time.Duration
	// MetricsListen, when set, serves GET /metrics there without a key
	// (--metrics-listen); MetricsSandboxLimit bounds the sandboxes with
	// per-sandbox series (--metrics-sandbox-limit).
	MetricsListen       string
	MetricsSandboxLimit int
	// UsageRetention: each team's per-minute usage stays this long (0:
	// forever).
	UsageRetention time.Duration
	CPUCount       int
	MemoryMB       int
	MaxCPUCount    int
	MaxMemoryMB    int
	DiskMB         int
	LogLevel       slog.Level
	TLS            bool
	// CodeInterpreter builds the code-interpreter-v1 template and binds the
	// interpreter server (InterpreterPath) into sandboxes.
	CodeInterpreter bool
	InterpreterPath string
	// Desktop builds and serves the desktop template (@e2b/desktop's
	// default); without it a create of that template is told the flag.
	Desktop bool
	// MaxConnections caps the listener's open connections (0: no cap);
	// IdleTimeout closes keep-alive connections idle that long.
	MaxConnections int
	IdleTimeout    time.Duration
	// TeamQuotas are every team's default limits (--team-max-*).
	TeamQuotas Quotas
	// VolumeSizeMB is the size limit of a new volume (--volume-size-mb;
	// 0: DefaultVolumeSizeMB).
	VolumeSizeMB int
	// PausedRetention and SnapshotRetention remove paused sandboxes and
	// snapshots this old (0: kept).
	PausedRetention, SnapshotRetention time.Duration
	// RegistryAllow are internal ranges the server may still pull images
	// from (--registry-allow); all others are refused.
	RegistryAllow []netip.Prefix
	// EgressAllow are internal ranges the egress proxy may still connect
	// to for a sandbox's allowed domains (--egress-allow).
	EgressAllow []netip.Prefix
	// OOMGuardPoll keeps envd's OOM guard polling on runsc even where
	// memory alerts exist (for comparisons).
	OOMGuardPoll bool
	// RunscFlags are more global flags for runsc (--runsc-flag).
	RunscFlags []string
	// RunscEagerRestore turns off background page loading on restore
	// (--runsc-eager-restore, for comparisons; oci.Options.EagerRestore).
	RunscEagerRestore bool
	// PoolSize is the most sandboxes kept booted ahead per template and
	// settings that creates asked for (--pool-size; 0: no pools), PoolMin
	// the fewest, PoolMemoryMB the host memory all pools may hold.
	PoolSize, PoolMin, PoolMemoryMB int
	// PoolTemplates are pre-warmed: their pools (for default settings)
	// are filled from the start and kept at PoolMin (--pool-templates).
	PoolTemplates []string
	// StartWait bounds how long a cold create, resume or fork waits for
	// its turn while the machine is busy (--start-wait); StartSlots is how
	// many start at once (--start-slots; 0: two per CPU); StartQueue how
	// many may wait (--start-queue); StartPressure the CPU pressure of
	// the sandboxes' own cgroups (PSI some avg10, %) at which starts go
	// one at a time (--start-pressure; 0: never).
	StartWait     time.Duration
	StartSlots    int
	StartQueue    int
	StartPressure float64
	// EventsRetention: lifecycle events (and their webhook deliveries)
	// older than this are pruned (--events-retention; 0: kept).
	EventsRetention time.Duration
	// WebhookAllow are internal ranges webhook deliveries may still reach
	// (--webhook-allow), e.g. a receiver on the host or the LAN.
	WebhookAllow []netip.Prefix
	// Cluster is the role and what a node tells the cluster (role.go).
	Cluster
}

// maxBridgeName is the kernel's limit on interface names (IFNAMSIZ - 1).
const maxBridgeName = 15

// maxPoolSize bounds --pool-size; --pool-memory-mb is the real bound.
const maxPoolSize = 1000

// Validate reports every setting that cannot work, before anything starts,
// named as its flag.
func (c *Config) Validate() error {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	c.validatePlaces(bad)
	c.validateNumbers(bad)
	c.validateRole(bad)
	return errors.Join(errs...)
}

// badFlag records what is wrong with a flag.
type badFlag func(flag, format string, args ...any)

// validatePlaces checks addresses, names and paths.
func (c *Config) validatePlaces(bad badFlag) {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "%q is not host:port", c.Listen)
	}
	if c.DataDir == "" {
		bad("data-dir", "must not be empty")
	}
	if c.Store != "" && !postgres.IsURL(c.Store) {
		bad("store", "must be empty (SQLite in the data dir) or a postgres:// URL")
	}
	if backendByName(c.Runtime) == nil {
		bad("runtime", "must be one of %s, not %q", backendNames(), c.Runtime)
	}
	if p, err := netip.ParsePrefix(c.Subnet); err != nil || !p.Addr().Is4() || p.Bits() > 30 {
		bad("subnet", "%q is not an IPv4 range of at least 4 addresses (e.g. 10.99.0.0/16)", c.Subnet)
	}
	if c.Bridge == "" || len(c.Bridge) > maxBridgeName {
		bad("bridge", "%q must be 1 to %d characters", c.Bridge, maxBridgeName)
	}
	if c.Domain == "" {
		bad("domain", "must not be empty")
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			bad("metrics-listen", "%q is not host:port", c.MetricsListen)
		}
	}
	if c.EnvdPath == "" {
		bad("envd", "must not be empty")
	}
	if c.CodeInterpreter && c.InterpreterPath == "" {
		bad("interpreter", "must not be empty with --code-interpreter")
	}
	if c.EgressProxyPort < 0 || c.EgressProxyPort > 65535 {
		bad("egress-proxy-port", "%d is not a port (0 turns the egress proxy off)", c.EgressProxyPort)
	}
	if u := c.DNSUpstream; u != "" && u != "off" {
		host, _, err := net.SplitHostPort(u)
		if err != nil {
			host = u
		}
		if host == "" || strings.ContainsAny(host, " \t/") {
			bad("dns-upstream", "%q is not a host, host:port or off", u)
		}
	}
}

// validateNumbers checks sizes, limits and durations.
func (c *Config) validateNumbers(bad badFlag) {
	if c.MetricsSandboxLimit < 0 {
		bad("metrics-sandbox-limit", "must not be negative (0: no per-sandbox series)")
	}
	if c.PoolSize < 0 || c.PoolSize > maxPoolSize {
		bad("pool-size", "%d must be between 0 and %d", c.PoolSize, maxPoolSize)
	}
	if c.PoolMin < 0 || c.PoolMemoryMB < 0 {
		bad("pool-min", "%d and --pool-memory-mb %d must not be negative", c.PoolMin, c.PoolMemoryMB)
	}
	if c.StartPressure < 0 || c.StartPressure > 100 {
		bad("start-pressure", "%v must be between 0 and 100", c.StartPressure)
	}
	if c.StartSlots < 0 || c.StartQueue < 0 {
		bad("start-slots", "%d and --start-queue %d must not be negative", c.StartSlots, c.StartQueue)
	}
	if c.StartWait < 0 {
		bad("start-wait", "%v must not be negative", c.StartWait)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"max-timeout", c.MaxTimeout}, {"checkpoint-after", c.CheckpointAfter}, {"metrics-retention", c.MetricsRetention}, {"usage-retention", c.UsageRetention}, {"idle-timeout", c.IdleTimeout}, {"paused-retention", c.PausedRetention}, {"snapshot-retention", c.SnapshotRetention}, {"events-retention", c.EventsRetention}} {
		if d.v < 0 {
			bad(d.flag, "must not be negative")
		}
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"default-cpu", c.CPUCount}, {"default-memory", c.MemoryMB}, {"default-disk", c.DiskMB}} {
		if n.v <= 0 {
			bad(n.flag, "must be positive")
		}
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"team-max-sandboxes", c.TeamQuotas.Sandboxes}, {"team-max-memory", c.TeamQuotas.MemoryMB}, {"team-max-cpus", c.TeamQuotas.CPUs}, {"team-max-builds", c.TeamQuotas.Builds}, {"team-max-volume-mb", c.TeamQuotas.VolumeMB}, {"volume-size-mb", c.VolumeSizeMB}, {"max-connections", c.MaxConnections}} {
		if n.v < 0 {
			bad(n.flag, "must not be negative (0: no limit)")
		}
	}
	if c.MaxCPUCount < 0 || c.MaxMemoryMB < 0 {
		bad("max-cpu/--max-memory", "must not be negative")
	}
}
