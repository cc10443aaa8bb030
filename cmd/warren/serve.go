package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/warren-sandbox/warren/internal/admission"
	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/server"
	"github.com/warren-sandbox/warren/internal/telemetry"
	"github.com/warren-sandbox/warren/internal/usage"
)

// serveOptions are what `warren serve`'s flags parse into; config turns
// them into the server's checked Config.
type serveOptions struct {
	cfg        server.Config
	secretFile string // --cluster-secret-file
}

func serveCommand(o *serveOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "serve [flags]",
		Short:   "run the API server and sandboxes",
		GroupID: "server",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config()
			if err != nil {
				return err
			}
			return runServe(cfg)
		},
	}
	c := &o.cfg
	c.PoolTemplates = []string{"base", "code-interpreter-v1"}
	fs := cmd.Flags()
	serveFlagsPlaces(fs, c)
	serveFlagsSandboxes(fs, c)
	serveFlagsPools(fs, c)
	serveFlagsObserve(fs, c)
	serveFlagsCluster(fs, o)
	complete := func(name string, values ...string) {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	complete("runtime", "runsc", "runc")
	complete("role", server.RoleAll, server.RoleNode, server.RoleAPI)
	complete("log-level", "debug", "info", "warn", "error")
	for _, d := range []string{"data-dir", "cache-dir", "shared-dir"} {
		_ = cmd.MarkFlagDirname(d)
	}
	return cmd
}

// config is the server's Config from the parsed flags and the environment,
// checked by Config.Validate.
func (o *serveOptions) config() (*server.Config, error) {
	c := o.cfg
	c.ClusterSecret = os.Getenv(clusterauth.Env)
	if o.secretFile != "" {
		b, err := os.ReadFile(o.secretFile)
		if err != nil {
			return nil, fmt.Errorf("--cluster-secret-file: %w", err)
		}
		c.ClusterSecret = string(b)
	}
	// envd and the interpreter server ship next to warren.
	if c.EnvdPath == "" || c.InterpreterPath == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding warren's own binary: %w", err)
		}
		if c.EnvdPath == "" {
			c.EnvdPath = filepath.Join(filepath.Dir(exe), "envd")
		}
		if c.InterpreterPath == "" {
			c.InterpreterPath = filepath.Join(filepath.Dir(exe), "interpreter")
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// serveFlagsPlaces: where warren listens, keeps its state and finds its parts.
func serveFlagsPlaces(fs *pflag.FlagSet, c *server.Config) {
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:3000", "address for the API and all sandbox traffic")
	fs.StringVar(&c.DataDir, "data-dir", server.DefaultDataDir, "where the database and sandbox state live")
	fs.StringVar(&c.Store, "store", os.Getenv(server.StoreEnv), server.StoreFlagHelp)
	fs.StringVar(&c.CacheDir, "cache-dir", "/var/cache/warren", "where built templates are cached, shared by data dirs")
	fs.StringVar(&c.Runtime, "runtime", "runsc", "default runtime backend: runsc (gVisor) or runc")
	fs.StringVar(&c.Domain, "domain", "localhost", "sandbox domain: sandboxes answer at <port>-<id>.<domain>")
	fs.StringVar(&c.Subnet, "subnet", "10.99.0.0/16", "private range for sandbox addresses; must not overlap the host's")
	fs.StringVar(&c.Bridge, "bridge", "warren0", "name of the host bridge sandboxes attach to")
	fs.StringVar(&c.EnvdPath, "envd", "", "path of the static envd binary (default: next to warren)")
	c.LogLevel = slog.LevelInfo
	fs.Var(levelValue{&c.LogLevel}, "log-level", "debug, info, warn or error (a bad level is an error)")
	fs.BoolVar(&c.CodeInterpreter, "code-interpreter", true, "build and serve the code-interpreter-v1 template")
	fs.BoolVar(&c.Desktop, "desktop", false, "build and serve the desktop template for @e2b/desktop (about 800 MiB more; the first build takes 5-8 minutes)")
	fs.StringVar(&c.InterpreterPath, "interpreter", "", "path of the static interpreter server binary (default: next to warren)")
	fs.IntVar(&c.EgressProxyPort, "egress-proxy-port", 4380, "port of the egress proxy on the sandbox gateway, which enforces allowOut domains (0: domain rules are refused)")
	fs.StringVar(&c.DNSUpstream, "dns-upstream", "", "resolver for sandboxes' DNS (host:port; default the host's first IPv4 nameserver; off: none)")
	fs.BoolVar(&c.DiskQuota, "disk-quota", true, "give each sandbox a disk of its own of --default-disk MB for its writable layer (ENOSPC inside when full)")
	fs.BoolVar(&c.TLS, "tls", false, "serve HTTPS (h2 and http/1.1) with a CA and wildcard certificate warren makes in <data-dir>/tls")
	fs.Func("registry-allow", "an internal range (CIDR) image pulls may reach, e.g. a registry on the LAN; repeatable (default: none: loopback, private, link-local, the host's and the sandboxes' addresses are refused)", cidrList(&c.RegistryAllow))
	fs.Func("runsc-flag", "a global flag for runsc, e.g. --debug or --debug-log=/var/log/runsc/; repeatable", func(v string) error {
		c.RunscFlags = append(c.RunscFlags, v)
		return nil
	})
	fs.BoolVar(&c.RunscEagerRestore, "runsc-eager-restore", false, "runsc: read a paused sandbox's whole memory image before it resumes instead of loading pages in the background; for comparing the two")
	fs.BoolVar(&c.OOMGuardPoll, "oom-guard-poll", false, "runsc: let envd's OOM guard poll memory (every 50 ms) instead of waiting for the host's memory alerts; for comparing the two")
	fs.Func("egress-allow", "an internal range (CIDR) a sandbox's allowed domains may resolve to, e.g. a service on the LAN; repeatable (default: none, as for --registry-allow)", cidrList(&c.EgressAllow))
	fs.IntVar(&c.MaxConnections, "max-connections", 4096, "most connections the listener holds open at once; more wait in the kernel's backlog (0: no cap)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", 2*time.Minute, "close keep-alive connections idle this long (0: never)")
}

// serveFlagsSandboxes: what a sandbox gets and may ask for, and how long things live.
func serveFlagsSandboxes(fs *pflag.FlagSet, c *server.Config) {
	fs.DurationVar(&c.MaxTimeout, "max-timeout", 24*time.Hour, "longest sandbox timeout a request may ask for (0: no cap)")
	fs.DurationVar(&c.CheckpointAfter, "checkpoint-after", 30*time.Second, "how long a paused runsc sandbox stays frozen in memory before its memory is checkpointed to disk (0: at once)")
	fs.IntVar(&c.CPUCount, "default-cpu", 2, "CPUs per sandbox when the template does not say")
	fs.IntVar(&c.MemoryMB, "default-memory", 512, "memory MB per sandbox when the template does not say")
	fs.IntVar(&c.MaxCPUCount, "max-cpu", goruntime.NumCPU(), "the most CPUs a create may ask for (cpuCount)")
	fs.IntVar(&c.MaxMemoryMB, "max-memory", 8192, "the most memory MB a create may ask for (memoryMB)")
	fs.IntVar(&c.DiskMB, "default-disk", 4096, "disk MB per sandbox when the template does not say")
	fs.IntVar(&c.TeamQuotas.Sandboxes, "team-max-sandboxes", 100, "running sandboxes a team may have at once (0: no limit; warren teams set overrides per team)")
	fs.IntVar(&c.TeamQuotas.MemoryMB, "team-max-memory", 0, "total memory MB of a team's running sandboxes (0: no limit)")
	fs.IntVar(&c.TeamQuotas.CPUs, "team-max-cpus", 0, "total vCPUs of a team's running sandboxes (0: no limit)")
	fs.IntVar(&c.TeamQuotas.Builds, "team-max-builds", 4, "template builds a team may run at once (0: no limit)")
	fs.IntVar(&c.VolumeSizeMB, "volume-size-mb", 1024, "size limit of each new volume in MB: a full volume gives ENOSPC inside the sandbox (on one machine its image is sparse: unused space costs no disk)")
	fs.IntVar(&c.TeamQuotas.VolumeMB, "team-max-volume-mb", 0, "total size limit in MB of a team's volumes (0: no limit)")
	fs.DurationVar(&c.StartWait, "start-wait", admission.DefaultMaxWait, "how long a cold create, resume or fork waits for its turn while the machine is busy and no start ends before it is refused (503, Retry-After); while turns keep coming it waits as long as its request does")
	fs.IntVar(&c.StartSlots, "start-slots", 0, "cold creates, resumes and forks that start at once; more wait their turn, fairly between teams (0: two per CPU)")
	fs.IntVar(&c.StartQueue, "start-queue", admission.DefaultMaxQueue, "starts that may wait at once; past it a start is refused at once (503, Retry-After)")
	fs.Float64Var(&c.StartPressure, "start-pressure", admission.DefaultHighPressure, "while warren's own sandboxes waited for a CPU this share (%) of the last 10 s (PSI cpu some avg10 of their cgroups), starts go one at a time, so running sandboxes keep their CPU; 0: never")
	fs.Float64Var(&c.StartPressure, "max-cpu-pressure", admission.DefaultHighPressure, "deprecated: the old name of --start-pressure (creates are no longer refused for CPU pressure, they wait)")
	fs.DurationVar(&c.PausedRetention, "paused-retention", 0, "remove a sandbox paused this long, disk and all (0: keep paused sandboxes)")
	fs.DurationVar(&c.SnapshotRetention, "snapshot-retention", 0, "delete snapshots this old (0: keep them)")
}

// serveFlagsPools: the warm pools.
func serveFlagsPools(fs *pflag.FlagSet, c *server.Config) {
	fs.IntVar(&c.PoolSize, "pool-size", 24, "the most sandboxes kept booted ahead for one template (and settings) that creates ask for, claimed by the next create; 0: no pools")
	fs.IntVar(&c.PoolMin, "pool-min", 1, "the fewest sandboxes a pool keeps while creates still ask for its template (within --pool-size)")
	fs.Func("pool-templates", "comma-separated templates whose pools (for creates with default settings) are filled from the start and kept at --pool-min even when idle (default \"base,code-interpreter-v1\"; \"\": none)", func(v string) error {
		c.PoolTemplates = splitList(v)
		return nil
	})
	fs.IntVar(&c.PoolMemoryMB, "pool-memory-mb", 2048, "host memory (MiB) all pools together may hold; 0: no bound")
}

// serveFlagsObserve: metrics, usage, lifecycle events and webhooks.
func serveFlagsObserve(fs *pflag.FlagSet, c *server.Config) {
	fs.DurationVar(&c.MetricsRetention, "metrics-retention", time.Hour, "how long a killed sandbox's metrics history stays readable (0: dropped when it ends)")
	fs.StringVar(&c.MetricsListen, "metrics-listen", "", "also serve GET /metrics on this address, without an API key (e.g. 127.0.0.1:9090; default: off, /metrics on --listen takes the admin key)")
	fs.IntVar(&c.MetricsSandboxLimit, "metrics-sandbox-limit", telemetry.DefaultSandboxLimit, "the most running sandboxes with per-sandbox series in /metrics; the rest are counted in warren_sandbox_series_dropped_total")
	fs.DurationVar(&c.UsageRetention, "usage-retention", usage.DefaultRetention, "how long each team's per-minute usage (GET /usage) is kept (0: forever)")
	fs.DurationVar(&c.EventsRetention, "events-retention", 7*24*time.Hour, "keep sandbox lifecycle events (GET /events/sandboxes) and their webhook deliveries this long (0: forever)")
	fs.Func("webhook-allow", "an internal range (CIDR) webhook deliveries may reach, e.g. 127.0.0.0/8 for a receiver on the host; repeatable (default: none, as for --registry-allow)", cidrList(&c.WebhookAllow))
}

// serveFlagsCluster: the role, what a node tells the cluster, and the
// cluster secret's file.
func serveFlagsCluster(fs *pflag.FlagSet, o *serveOptions) {
	c := &o.cfg
	host, _ := os.Hostname()
	c.Version = version
	fs.StringVar(&c.Role, "role", server.RoleAll, "all: API and sandboxes on this machine (SQLite by default); node: run sandboxes for a cluster sharing --store=postgres://…; api: the cluster's stateless API in front of the nodes (--store=postgres://…, no root)")
	fs.StringVar(&c.NodeName, "node-name", host, "this node's name in the cluster (--role=node; default the hostname)")
	fs.StringVar(&c.AdvertiseURL, "advertise-url", "", "the URL the API role reaches this node at, e.g. http://10.0.0.7:3000 (required with --role=node)")
	fs.DurationVar(&c.HeartbeatInterval, "heartbeat-interval", server.DefaultHeartbeatInterval, "how often a node writes its heartbeat (capacity and usage) to the store")
	fs.StringVar(&c.SharedDir, "shared-dir", "", "storage every node mounts at this same path (NFS, a CSI volume; --role=node): paused sandboxes are parked there, and when a node dies the cluster hands them to another that sees the same storage")
	fs.DurationVar(&c.NodeDeadAfter, "node-dead-after", server.DefaultNodeDeadAfter, "a node whose last heartbeat is this old is reported dead (GET /nodes); the API role reports its running sandboxes lost then, or up to one --heartbeat-interval later when the node's clock is ahead of the API's (docs/cluster.md)")
	fs.StringVar(&o.secretFile, "cluster-secret-file", "", "file holding the cluster secret (at least 32 characters, the same on the API and every node), with which they authenticate each other; default $"+clusterauth.Env+"; required with --role=api and --role=node")
}

func runServe(cfg *server.Config) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(logger)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return server.Run(log.WithLogger(ctx, logger), *cfg)
}

// levelValue is a log level flag; pflag's TextVar would show no type name
// in the help for it.
type levelValue struct{ l *slog.Level }

func (v levelValue) String() string {
	if v.l == nil {
		return ""
	}
	return v.l.String()
}
func (v levelValue) Set(s string) error { return v.l.UnmarshalText([]byte(s)) }
func (v levelValue) Type() string       { return "level" }

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// cidrList parses a flag of comma-separated CIDR ranges, appending to dst.
func cidrList(dst *[]netip.Prefix) func(string) error {
	return func(v string) error {
		for _, f := range strings.Split(v, ",") {
			p, err := netip.ParsePrefix(strings.TrimSpace(f))
			if err != nil {
				return fmt.Errorf("%q is not a CIDR range", f)
			}
			*dst = append(*dst, p.Masked())
		}
		return nil
	}
}
