package server

import (
	"net/url"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/store/postgres"
)

// Roles of `warren serve` (docs/cluster.md).
const (
	RoleAll  = "all"  // API and sandboxes in one process: the one-machine server
	RoleNode = "node" // runs sandboxes and registers in a shared store
	RoleAPI  = "api"  // the stateless API in front of the nodes
)

// Defaults of the cluster flags.
const (
	DefaultHeartbeatInterval = 5 * time.Second
	DefaultNodeDeadAfter     = 30 * time.Second
)

// Cluster is what `warren serve` needs to know about the cluster it is
// part of; RoleAll with the rest unset is the one-machine server.
type Cluster struct {
	Role string // RoleAll (or ""), RoleNode or RoleAPI
	// NodeName names this node in the store (--node-name); AdvertiseURL
	// is where the API role reaches it (--advertise-url).
	NodeName, AdvertiseURL string
	// HeartbeatInterval is how often a node writes its record;
	// NodeDeadAfter is how old a heartbeat may be before GET /nodes calls
	// the node dead.
	HeartbeatInterval, NodeDeadAfter time.Duration
	// Version is warren's, as a node reports it.
	Version string
	// SharedDir is storage every node mounts at the same path
	// (--shared-dir, nodes only): paused sandboxes are parked there, and
	// a node takes over what a dead one parked. ShareID is read from it
	// at start (openShare) and tells nodes that see the same files.
	SharedDir, ShareID string
	// ClusterSecret authenticates the API role and the nodes to each
	// other (clusterauth; $WARREN_CLUSTER_SECRET or
	// --cluster-secret-file): required with --role=api and --role=node,
	// the same everywhere.
	ClusterSecret string
}

// clusterSigner is what signs and checks the cluster's own calls; nil in
// one-machine mode.
func (c *Cluster) clusterSigner() (*clusterauth.Signer, error) {
	if c.Role != RoleNode && c.Role != RoleAPI {
		return nil, nil
	}
	return clusterauth.New(c.ClusterSecret, nil)
}

// IsNode says whether this server runs as a cluster node.
func (c *Cluster) IsNode() bool { return c.Role == RoleNode }

// validateRole checks the role and what it requires.
func (c *Config) validateRole(bad badFlag) {
	switch c.Role {
	case "", RoleAll:
	case RoleNode:
		c.validateNode(bad)
	case RoleAPI:
		if !postgres.IsURL(c.Store) {
			bad("store", "--role=api needs the cluster's shared store, a postgres:// URL (default $%s)", StoreEnv)
		}
	default:
		bad("role", "must be all, node or api, not %q", c.Role)
	}
	if _, err := c.clusterSigner(); err != nil {
		bad("cluster-secret-file", "--role=%s needs the cluster secret, the same on the API and every node, in $%s or a file: %v",
			c.Role, clusterauth.Env, err)
	}
	if c.SharedDir != "" && (c.Role != RoleNode || !filepath.IsAbs(c.SharedDir)) {
		bad("shared-dir", "%q must be an absolute path, and only a node (--role=node) parks sandboxes", c.SharedDir)
	}
	if c.HeartbeatInterval <= 0 {
		bad("heartbeat-interval", "must be positive")
	}
	if c.NodeDeadAfter <= c.HeartbeatInterval {
		bad("node-dead-after", "%s must be longer than --heartbeat-interval %s, or live nodes would look dead between heartbeats",
			c.NodeDeadAfter, c.HeartbeatInterval)
	}
}

// validateNode checks what a node needs: a store the cluster shares, a
// name and an address for the API role.
func (c *Config) validateNode(bad badFlag) {
	if !postgres.IsURL(c.Store) {
		bad("store", "--role=node needs the cluster's shared store, a postgres:// URL (default $%s); SQLite in the data dir is one machine's", StoreEnv)
	}
	if !validNodeName(c.NodeName) {
		bad("node-name", "%q must be 1 to 63 letters, digits, '.', '-' or '_' with --role=node (it names the node's cgroup too)", c.NodeName)
	}
	u, err := url.Parse(c.AdvertiseURL)
	if c.AdvertiseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("advertise-url", "%q must be the http(s) URL the API role reaches this node at (e.g. http://10.0.0.7:3000)", c.AdvertiseURL)
	}
}

func validNodeName(s string) bool {
	if s == "" || len(s) > 63 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
