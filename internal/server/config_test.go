package server

import (
	"net"
	"strings"
	"testing"
	"time"
)

func validConfig() Config {
	return Config{
		Listen: "127.0.0.1:3000", DataDir: "/var/lib/warren", Runtime: "runsc", Domain: "localhost",
		Subnet: "10.99.0.0/16", Bridge: "warren0", EnvdPath: "/x/envd", InterpreterPath: "/x/interpreter",
		CodeInterpreter: true, MaxTimeout: time.Hour, CPUCount: 2, MemoryMB: 512, DiskMB: 4096,
		MaxCPUCount: 4, MaxMemoryMB: 8192, EgressProxyPort: 4380,
		Cluster: Cluster{HeartbeatInterval: DefaultHeartbeatInterval, NodeDeadAfter: DefaultNodeDeadAfter},
	}
}

// TestValidate: a setting that cannot work is an error naming its flag
// before anything starts.
func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"runc", func(c *Config) { c.Runtime = "runc" }, ""},
		{"dns off", func(c *Config) { c.DNSUpstream = "off" }, ""},
		{"dns host and port", func(c *Config) { c.DNSUpstream = "10.0.0.2:5353" }, ""},
		{"dns name", func(c *Config) { c.DNSUpstream = "resolver.lan" }, ""},
		{"no interpreter needed", func(c *Config) { c.CodeInterpreter, c.InterpreterPath = false, "" }, ""},
		{"unknown runtime", func(c *Config) { c.Runtime = "kata" }, "--runtime: must be one of runc, runsc"},
		{"negative pool", func(c *Config) { c.PoolSize = -1 }, "--pool-size: -1 must be between 0 and 1000"},
		{"pool", func(c *Config) { c.PoolSize = 2 }, ""},
		{"listen without port", func(c *Config) { c.Listen = "localhost" }, "--listen"},
		{"no data dir", func(c *Config) { c.DataDir = "" }, "--data-dir"},
		{"postgres store", func(c *Config) { c.Store = "postgres://warren@db/warren" }, ""},
		{"postgresql store", func(c *Config) { c.Store = "postgresql://warren@db/warren" }, ""},
		{"store not postgres", func(c *Config) { c.Store = "/var/lib/warren/warren.db" }, "--store"},
		{"IPv6 subnet", func(c *Config) { c.Subnet = "fd00::/64" }, "--subnet"},
		{"subnet too small", func(c *Config) { c.Subnet = "10.0.0.0/31" }, "--subnet"},
		{"subnet not a range", func(c *Config) { c.Subnet = "10.0.0.1" }, "--subnet"},
		{"bridge name too long", func(c *Config) { c.Bridge = "a-very-long-bridge" }, "--bridge"},
		{"no domain", func(c *Config) { c.Domain = "" }, "--domain"},
		{"negative retention", func(c *Config) { c.MetricsRetention = -time.Second }, "--metrics-retention"},
		{"negative checkpoint delay", func(c *Config) { c.CheckpointAfter = -time.Second }, "--checkpoint-after"},
		{"zero cpu", func(c *Config) { c.CPUCount = 0 }, "--default-cpu"},
		{"zero disk", func(c *Config) { c.DiskMB = 0 }, "--default-disk"},
		{"port out of range", func(c *Config) { c.EgressProxyPort = 70000 }, "--egress-proxy-port"},
		{"dns with a path", func(c *Config) { c.DNSUpstream = "a/b" }, "--dns-upstream"},
		{"negative connection cap", func(c *Config) { c.MaxConnections = -1 }, "--max-connections"},
		{"negative idle timeout", func(c *Config) { c.IdleTimeout = -time.Second }, "--idle-timeout"},
		{"role all", func(c *Config) { c.Role = RoleAll }, ""},
		{"node", asNode, ""},
		{"node on SQLite", func(c *Config) { asNode(c); c.Store = "" }, "--store: --role=node needs the cluster's shared store"},
		{"node without a name", func(c *Config) { asNode(c); c.NodeName = "" }, "--node-name"},
		{"node name with a slash", func(c *Config) { asNode(c); c.NodeName = "a/b" }, "--node-name"},
		{"shared dir off a node", func(c *Config) { c.SharedDir = "/srv/share" }, "--shared-dir"},
		{"relative shared dir", func(c *Config) { asNode(c); c.SharedDir = "share" }, "--shared-dir"},
		{"node without an address", func(c *Config) { asNode(c); c.AdvertiseURL = "" }, "--advertise-url"},
		{"node address not a URL", func(c *Config) { asNode(c); c.AdvertiseURL = "10.0.0.7:3000" }, "--advertise-url"},
		{"api", asAPI, ""},
		{"api without the cluster secret", func(c *Config) { asAPI(c); c.ClusterSecret = "" }, "--cluster-secret-file: --role=api needs the cluster secret"},
		{"node without the cluster secret", func(c *Config) { asNode(c); c.ClusterSecret = "" }, "--cluster-secret-file: --role=node needs the cluster secret"},
		{"node with a short cluster secret", func(c *Config) { asNode(c); c.ClusterSecret = "secret" }, "at least 32 characters"},
		{"api on SQLite", func(c *Config) { c.Role = RoleAPI }, "--store: --role=api needs the cluster's shared store"},
		{"unknown role", func(c *Config) { c.Role = "worker" }, `--role: must be all, node or api, not "worker"`},
		{"no heartbeat", func(c *Config) { c.HeartbeatInterval = 0 }, "--heartbeat-interval"},
		{"dead before a missed beat", func(c *Config) { c.NodeDeadAfter = c.HeartbeatInterval }, "--node-dead-after"},
		{"two mistakes, both named", func(c *Config) { c.Runtime, c.Bridge = "", "" }, "--bridge"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			tc.change(&c)
			err := c.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestListenerCap: past --max-connections, a new connection is not
// accepted until an open one closes.
func TestListenerCap(t *testing.T) {
	t.Parallel()
	ln, _, err := listen(&Config{Listen: "127.0.0.1:0", MaxConnections: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	var open []net.Conn
	for range 2 {
		select {
		case c := <-accepted:
			open = append(open, c)
		case <-time.After(5 * time.Second):
			t.Fatal("the first two connections were not accepted")
		}
	}
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted past the cap of 2")
	case <-time.After(200 * time.Millisecond):
	}
	open[0].Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was not accepted after one closed")
	}
	open[1].Close()
}

// asNode makes c a valid node's config.
func asNode(c *Config) {
	c.Role, c.Store = RoleNode, "postgres://warren@db/warren"
	c.NodeName, c.AdvertiseURL = "n1", "http://10.0.0.7:3000"
	c.ClusterSecret = testClusterSecret
}

// asAPI makes c a valid API role's config.
func asAPI(c *Config) {
	c.Role, c.Store, c.ClusterSecret = RoleAPI, "postgres://w@db/w", testClusterSecret
}

const testClusterSecret = "config-test-cluster-secret-0123456789"
