package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"reflect"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/internal/admission"
	"github.com/warren-sandbox/warren/internal/server"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/telemetry"
	"github.com/warren-sandbox/warren/internal/usage"
)

// parsed is what a command line parsed into: the options, which command
// would have run, and its positional arguments.
type parsed struct {
	o    *cliOptions
	ran  string
	args []string
}

// parse runs the CLI on args as main does (Go-style flags rewritten, then
// cobra), with every command's action replaced by one that records it.
func parse(args ...string) (parsed, error) {
	p := parsed{o: &cliOptions{}}
	root := newRoot(p.o)
	var stub func(*cobra.Command)
	stub = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			stub(s)
		}
		if !c.HasSubCommands() && c.RunE != nil {
			c.RunE = func(c *cobra.Command, a []string) error {
				p.ran, p.args = commandName(c), a
				return nil
			}
		}
	}
	stub(root)
	root.SetArgs(goStyleFlags(root, args))
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	return p, root.Execute()
}

// parseServe is `warren serve args`' checked Config.
func parseServe(args []string) (*server.Config, error) {
	p, err := parse(append([]string{"serve"}, args...)...)
	if err != nil {
		return nil, err
	}
	return p.o.serve.config()
}

// defaultServe is serve's Config with no flags, as the flag package gave
// it before cobra (envd and the interpreter named, as the tests do).
func defaultServe() server.Config {
	host, _ := os.Hostname()
	c := server.Config{
		Listen: "127.0.0.1:3000", DataDir: server.DefaultDataDir, Store: os.Getenv(server.StoreEnv),
		CacheDir: "/var/cache/warren", Runtime: "runsc", Domain: "localhost", Subnet: "10.99.0.0/16",
		Bridge: "warren0", EnvdPath: "/x/envd", InterpreterPath: "/x/interpreter", LogLevel: slog.LevelInfo,
		CodeInterpreter: true, EgressProxyPort: 4380, DiskQuota: true, MaxConnections: 4096,
		IdleTimeout: 2 * time.Minute, MaxTimeout: 24 * time.Hour, CheckpointAfter: 30 * time.Second,
		CPUCount: 2, MemoryMB: 512, MaxCPUCount: goruntime.NumCPU(), MaxMemoryMB: 8192, DiskMB: 4096, VolumeSizeMB: 1024,
		TeamQuotas: server.Quotas{Sandboxes: 100, Builds: 4}, StartWait: admission.DefaultMaxWait,
		StartQueue: admission.DefaultMaxQueue, StartPressure: admission.DefaultHighPressure,
		PoolSize: 24, PoolMin: 1, PoolTemplates: []string{"base", "code-interpreter-v1"}, PoolMemoryMB: 2048,
		MetricsRetention: time.Hour, MetricsSandboxLimit: telemetry.DefaultSandboxLimit,
		UsageRetention: usage.DefaultRetention, EventsRetention: 7 * 24 * time.Hour,
	}
	c.Role, c.NodeName, c.Version = server.RoleAll, host, version
	c.HeartbeatInterval, c.NodeDeadAfter = server.DefaultHeartbeatInterval, server.DefaultNodeDeadAfter
	return c
}

// TestServeFlags: every spelling scripts, docs, deploy/ and test/e2e use
// maps to the Config the flag package made of it; nothing else changes.
func TestServeFlags(t *testing.T) {
	t.Setenv(server.StoreEnv, "")
	t.Setenv("WARREN_CLUSTER_SECRET", "")
	lan := netip.MustParsePrefix("192.168.0.0/16")
	loop := netip.MustParsePrefix("127.0.0.0/8")
	for _, tc := range []struct {
		name string
		args []string
		want func(*server.Config)
	}{
		{"defaults", nil, func(*server.Config) {}},
		{"up.sh", []string{"--listen", "0.0.0.0:3000", "--data-dir", "/d"}, func(c *server.Config) { c.Listen, c.DataDir = "0.0.0.0:3000", "/d" }},
		{"go style", []string{"-listen", "0.0.0.0:3000", "-data-dir=/d", "-tls", "-pool-size", "0"}, func(c *server.Config) {
			c.Listen, c.DataDir, c.TLS, c.PoolSize = "0.0.0.0:3000", "/d", true, 0
		}},
		{"e2e", []string{"--runtime", "runc", "--bridge", "we2e7", "--subnet", "10.231.7.0/24", "--pool-size=0", "--checkpoint-after=0", "--pool-size=2"}, func(c *server.Config) {
			c.Runtime, c.Bridge, c.Subnet, c.CheckpointAfter, c.PoolSize = "runc", "we2e7", "10.231.7.0/24", 0, 2
		}},
		{"busy.sh", []string{"--team-max-sandboxes=0", "--code-interpreter=false", "--team-max-sandboxes", "0"}, func(c *server.Config) {
			c.TeamQuotas.Sandboxes, c.CodeInterpreter = 0, false
		}},
		{"desktop", []string{"--desktop"}, func(c *server.Config) { c.Desktop = true }},
		{"no desktop", []string{"--desktop=false"}, func(*server.Config) {}},
		{"eager restores", []string{"--runsc-eager-restore"}, func(c *server.Config) { c.RunscEagerRestore = true }},
		{"lists", []string{"--registry-allow", "192.168.1.1/16,127.0.0.0/8", "--egress-allow=127.0.0.0/8", "--webhook-allow", "127.0.0.1/8", "--runsc-flag", "--debug", "--runsc-flag=--debug-log=/x/", "--pool-templates", ""}, func(c *server.Config) {
			c.RegistryAllow, c.EgressAllow, c.WebhookAllow = []netip.Prefix{lan, loop}, []netip.Prefix{loop}, []netip.Prefix{loop}
			c.RunscFlags, c.PoolTemplates = []string{"--debug", "--debug-log=/x/"}, nil
		}},
		{"numbers", []string{"--default-cpu", "4", "--max-memory", "1024", "--start-pressure", "12.5", "--max-cpu-pressure=7", "--start-slots", "3", "--idle-timeout", "0", "--log-level", "debug", "--paused-retention", "1h"}, func(c *server.Config) {
			c.CPUCount, c.MaxMemoryMB, c.StartPressure, c.StartSlots, c.IdleTimeout, c.LogLevel, c.PausedRetention = 4, 1024, 7, 3, 0, slog.LevelDebug, time.Hour
		}},
		{"observe", []string{"--metrics-listen", "127.0.0.1:9090", "--metrics-retention", "0s", "--events-retention=1h", "--usage-retention", "0", "--oom-guard-poll", "--disk-quota=false", "--dns-upstream", "off"}, func(c *server.Config) {
			c.MetricsListen, c.MetricsRetention, c.EventsRetention, c.UsageRetention, c.OOMGuardPoll, c.DiskQuota, c.DNSUpstream = "127.0.0.1:9090", 0, time.Hour, 0, true, false, "off"
		}},
		{"node.yaml", []string{"--role=node", "--listen=0.0.0.0:3000", "--store=postgres://w@db/w", "--domain=example.com", "--node-name=n1", "--advertise-url=http://10.1.2.3:3000", "--data-dir=/var/lib/warren", "--cache-dir=/c", "--shared-dir=/s", "--heartbeat-interval=5s", "--node-dead-after=1m"}, func(c *server.Config) {
			c.Role, c.Listen, c.Store, c.Domain, c.NodeName, c.AdvertiseURL, c.CacheDir, c.SharedDir = "node", "0.0.0.0:3000", "postgres://w@db/w", "example.com", "n1", "http://10.1.2.3:3000", "/c", "/s"
			c.HeartbeatInterval, c.NodeDeadAfter, c.ClusterSecret = 5*time.Second, time.Minute, "0123456789abcdef0123456789abcdef"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasSuffix(tc.name, ".yaml") {
				t.Setenv("WARREN_CLUSTER_SECRET", "0123456789abcdef0123456789abcdef")
			}
			got, err := parseServe(append([]string{"--envd", "/x/envd", "--interpreter", "/x/interpreter"}, tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			want := defaultServe()
			tc.want(&want)
			if d := fieldDiff(want, *got); len(d) > 0 {
				t.Errorf("%v: Config differs:\n%s", tc.args, strings.Join(d, "\n"))
			}
		})
	}
}

// TestCommandFlags: each command's flags, in the spellings that worked
// with the flag package (and the re-parser that let flags follow the
// arguments), reach the same options; wrong use is an error.
func TestCommandFlags(t *testing.T) {
	t.Setenv(server.StoreEnv, "")
	t.Setenv("E2B_API_URL", "")
	t.Setenv("E2B_API_KEY", "")
	for _, tc := range []struct {
		args    []string
		ran     string
		pos     []string
		check   func(*cliOptions) bool
		wantErr string
	}{
		{args: []string{"keys", "create", "--data-dir", "/d", "--name", "ci", "--team", "acme", "--scopes", "keys,sandboxes:read", "--expires", "24h"}, ran: "keys create",
			check: func(o *cliOptions) bool {
				return o.keys == keysOptions{db: storeFlags{dataDir: "/d"}, name: "ci", team: "acme", scopes: "keys,sandboxes:read", expires: 24 * time.Hour}
			}},
		{args: []string{"keys", "create"}, ran: "keys create", check: func(o *cliOptions) bool {
			return o.keys == keysOptions{db: storeFlags{dataDir: server.DefaultDataDir}, team: store.DefaultTeam}
		}},
		{args: []string{"keys", "list", "-store", "postgres://x/y"}, ran: "keys list", check: func(o *cliOptions) bool { return o.keys.db.store == "postgres://x/y" }},
		{args: []string{"keys", "revoke", "--data-dir", "/d", "ci"}, ran: "keys revoke", pos: []string{"ci"}},
		{args: []string{"keys", "revoke", "ci", "-data-dir=/d"}, ran: "keys revoke", pos: []string{"ci"}, check: func(o *cliOptions) bool { return o.keys.db.dataDir == "/d" }},
		{args: []string{"keys"}, wantErr: "keys needs a command: create, list, revoke"},
		{args: []string{"keys", "rotate"}, wantErr: `unknown keys command "rotate"`},
		{args: []string{"keys", "revoke"}, wantErr: "usage: warren keys revoke ID|NAME"},
		{args: []string{"keys", "create", "--expires", "soon"}, wantErr: `invalid argument "soon" for "--expires"`},
		{args: []string{"teams", "set", "acme", "--data-dir", "/d", "--max-sandboxes", "3", "--max-memory", "-1", "-max-cpus", "2", "--max-builds=1", "--max-volume-mb", "512"}, ran: "teams set", pos: []string{"acme"},
			check: func(o *cliOptions) bool {
				return o.teams == teamsOptions{db: storeFlags{dataDir: "/d"}, team: store.Team{MaxSandboxes: 3, MaxMemoryMB: -1, MaxCPUs: 2, MaxBuilds: 1, MaxVolumeMB: 512}}
			}},
		{args: []string{"teams", "list", "--store", "postgres://x/y"}, ran: "teams list", check: func(o *cliOptions) bool { return o.teams.db.store == "postgres://x/y" }},
		{args: []string{"teams", "set", "--data-dir", "/d"}, wantErr: "usage: warren teams set TEAM"},
		{args: []string{"teams", "grow"}, wantErr: `unknown teams command "grow"`},
		{args: []string{"image", "import", "img.tar", "--url", "http://h:3000", "--api-key", "k"}, ran: "image import", pos: []string{"img.tar"},
			check: func(o *cliOptions) bool { return o.image == connFlags{apiURL: "http://h:3000", apiKey: "k"} }},
		{args: []string{"image", "list", "-api-url=http://h:3000"}, ran: "image list", check: func(o *cliOptions) bool { return o.image.apiURL == "http://h:3000" }},
		{args: []string{"image", "import"}, wantErr: "usage: warren image import FILE|DIR"},
		{args: []string{"image", "pull"}, wantErr: `unknown image command "pull"`},
		{args: []string{"bench", "--runtime", "runc", "--data-dir", "/d", "--busy", "50", "-seq=0", "--burst-again=false", "--idle-window", "5s", "--url", "http://h"}, ran: "bench",
			check: func(o *cliOptions) bool {
				c := o.bench
				return c.Runtime == "runc" && c.DataDir == "/d" && c.Busy.Busy == 50 && c.TTI.Sequential == 0 && !c.TTI.BurstAgain &&
					c.Density.IdleWindow == 5*time.Second && c.URL == "http://h" && c.TTI.Staggered == 100 && c.NodeDir == "test/e2e" && c.Pause
			}},
		{args: []string{"bench", "extra"}, wantErr: "unknown command"},
		{args: []string{"selftest", "isolation", "--url", "http://h", "--api-key", "k", "--run", "proc.*"}, ran: "selftest isolation",
			check: func(o *cliOptions) bool {
				return o.selftest == selftestOptions{url: "http://h", key: "k", template: "base", run: "proc.*"}
			}},
		{args: []string{"selftest"}, wantErr: "selftest needs a command: isolation"},
		{args: []string{"template", "build", "--no-cache", "--name", "df", "--build-arg", "A=1,2", "--build-arg", "B", "-f", "D2", "--tag", "v1", "--tag=v2", "--target", "builder", "--cpu", "2", "--memory", "1024", "--ready-cmd", "true", "."},
			ran: "template build", pos: []string{"."},
			check: func(o *cliOptions) bool {
				return reflect.DeepEqual(o.template.build, buildFlags{file: "D2", name: "df", readyCmd: "true", target: "builder", tags: []string{"v1", "v2"},
					buildArgs: []string{"A=1,2", "B"}, cpu: 2, memory: 1024, noCache: true})
			}},
		{args: []string{"template", "build", "dir", "--f=dir/X", "-name", "n"}, ran: "template build", pos: []string{"dir"},
			check: func(o *cliOptions) bool { return o.template.build.file == "dir/X" && o.template.build.name == "n" }},
		{args: []string{"template", "tag", "app", "v1", "v2", "--url", "http://h"}, ran: "template tag", pos: []string{"app", "v1", "v2"},
			check: func(o *cliOptions) bool { return o.template.conn.apiURL == "http://h" }},
		{args: []string{"template", "get"}, wantErr: "usage: warren template get NAME[:TAG]"},
		{args: []string{"template", "untag", "app"}, wantErr: "requires at least 2 arg(s)"},
		{args: []string{"template", "push"}, wantErr: `unknown template command "push"`},
		{args: []string{"serve", "--listen"}, wantErr: "flag needs an argument: --listen"},
		{args: []string{"serve", "--lsten", "x"}, wantErr: "unknown flag: --lsten"},
		// Commands that were cobra's already keep their shorthands and
		// take no Go-style spelling.
		{args: []string{"sandbox", "ls", "-q", "-m", "a=b"}, ran: "sandbox ls"},
		{args: []string{"sandbox", "ls", "-json"}, wantErr: "unknown shorthand flag: 'j'"},
	} {
		p, err := parse(tc.args...)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err = %v, want one with %q", tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case p.ran != tc.ran || strings.Join(p.args, "\x00") != strings.Join(tc.pos, "\x00") || len(p.args) != len(tc.pos):
			t.Errorf("%v: ran %q %q, want %q %q", tc.args, p.ran, p.args, tc.ran, tc.pos)
		case tc.check != nil && !tc.check(p.o):
			t.Errorf("%v: parsed into %+v", tc.args, *p.o)
		}
	}
}

// TestGoStyleFlags: only long flag names of the commands that had Go's flag
// package are rewritten, never a flag's value or a positional argument.
func TestGoStyleFlags(t *testing.T) {
	root := newRoot(&cliOptions{})
	for _, tc := range []struct{ in, want []string }{
		{[]string{"serve", "-listen", "-x", "-tls", "-data-dir=/d", "-help"}, []string{"serve", "--listen", "-x", "--tls", "--data-dir=/d", "--help"}},
		{[]string{"template", "build", "-f", "-name", "-name", "n", "-", "--", "-tag"}, []string{"template", "build", "-f", "-name", "--name", "n", "-", "--", "-tag"}},
		{[]string{"template", "build", "--ready-cmd", "-tag", "-nope"}, []string{"template", "build", "--ready-cmd", "-tag", "-nope"}},
		{[]string{"keys", "create", "-team", "t", "-data-dir", "d"}, []string{"keys", "create", "--team", "t", "--data-dir", "d"}},
		{[]string{"sandbox", "ls", "-json"}, []string{"sandbox", "ls", "-json"}},
		{[]string{"nosuch", "-listen"}, []string{"nosuch", "-listen"}},
	} {
		if got := goStyleFlags(root, tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHelpAndCompletion: every command answers --help (status 0), and the
// completion scripts and flag completions come from the command tree.
func TestHelpAndCompletion(t *testing.T) {
	var walk func(*cobra.Command)
	var paths [][]string
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		paths = append(paths, strings.Fields(c.CommandPath())[1:])
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot(&cliOptions{}))
	if len(paths) < 30 {
		t.Fatalf("only %d commands: %v", len(paths), paths)
	}
	for _, p := range paths {
		out, err := run(append(p, "--help")...)
		if err != nil || !strings.Contains(out, "Usage:") || !strings.Contains(out, "--help") {
			t.Errorf("%v --help: %v\n%s", p, err, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion", "bash"}, "bash completion V2 for warren"},
		{[]string{"completion", "zsh"}, "#compdef warren"},
		{[]string{"completion", "fish"}, "complete -c warren"},
		{[]string{"__complete", "serve", "--runtime", ""}, "runsc\nrunc\n"},
		{[]string{"__complete", "serve", "--data-d"}, "--data-dir"},
		{[]string{"__complete", "keys", ""}, "create\t"},
		{[]string{"__complete", "template", "build", "--n"}, "--name"},
		{[]string{"__complete", "selftest", "isolation", "--r"}, "--run"},
	} {
		if out, err := run(tc.args...); err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("%v: %v, want %q in\n%s", tc.args, err, tc.want, out)
		}
	}
}

// run executes the CLI for real, returning what it wrote.
func run(args ...string) (string, error) {
	root := newRoot(&cliOptions{})
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(goStyleFlags(root, args))
	err := root.Execute()
	return out.String(), err
}

// fieldDiff names the fields of two structs of one type that differ.
func fieldDiff(want, got any) []string {
	var out []string
	var walk func(prefix string, w, g reflect.Value)
	walk = func(prefix string, w, g reflect.Value) {
		for i := range w.NumField() {
			f := w.Type().Field(i)
			if f.Type.Kind() == reflect.Struct && f.Anonymous {
				walk(prefix, w.Field(i), g.Field(i))
				continue
			}
			if !reflect.DeepEqual(w.Field(i).Interface(), g.Field(i).Interface()) {
				out = append(out, fmt.Sprintf("%s%s: want %v, got %v", prefix, f.Name, w.Field(i), g.Field(i)))
			}
		}
	}
	walk("", reflect.ValueOf(want), reflect.ValueOf(got))
	return out
}
