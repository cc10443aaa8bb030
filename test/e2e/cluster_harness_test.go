package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// Server indices of the cluster tests: nodes take clusterNodeIndex+i
// (bridge we2e190.., subnets 10.231.190-192.0/24 inside each node's netns),
// the API process clusterAPIIndex.
const (
	clusterNodeIndex = 190
	clusterAPIIndex  = 193
)

// cluster is one Postgres, the `warren serve --role=node` processes, each
// in a network namespace of its own, and (once started) one
// `warren serve --role=api` in the host's, all with the same admin key.
type cluster struct {
	cfg   config
	store string // the Postgres URL
	key   string
	nodes []*clusterNode
	api   *server
}

// clusterNode is node i: its netns, its options (kept for restarts) and
// its current process.
type clusterNode struct {
	name string
	ns   string
	addr string // 10.241.<i>.2:3000, inside ns
	opts serverOpts
	srv  *server
}

// startClusterNodes starts Postgres and n nodes, one after the other (the
// first start may build the templates the others then find cached), and
// waits until GET /nodes lists all n alive.
func startClusterNodes(t testing.TB, cfg config, n int) *cluster {
	c := &cluster{cfg: cfg, store: pgtest.Start(t).NewDatabase(t), key: newAPIKey(t)}
	for range n {
		c.addNode(t)
	}
	c.wantAlive(t, c.nodeClient(t, c.nodes[0]), nil)
	return c
}

// addNode starts node-<i>, the next one, in netns wcl-<pid>-<i>.
func (c *cluster) addNode(t testing.TB) *clusterNode {
	i := len(c.nodes) + 1
	ns, addr := nodeNetns(t, i)
	name := fmt.Sprintf("node-%d", i)
	o := nodeOpts(t, c.cfg, clusterNodeIndex+i-1, name, c.store, c.key)
	o.netns, o.listen = ns, addr
	for j, a := range o.args {
		if strings.HasPrefix(a, "--advertise-url=") {
			o.args[j] = "--advertise-url=http://" + addr
		}
	}
	nd := &clusterNode{name: name, ns: ns, addr: addr, opts: o}
	nd.srv = launchServer(t, c.cfg, o)
	c.nodes = append(c.nodes, nd)
	return nd
}

// startAPI starts the API role on a loopback port of the host's netns.
func (c *cluster) startAPI(t testing.TB) *server {
	c.api = launchServer(t, c.cfg, serverOpts{index: clusterAPIIndex, api: true, apiKey: c.key, dataDir: t.TempDir(),
		args: []string{"--role=api", "--store", c.store,
			"--heartbeat-interval=" + nodesHeartbeat.String(), "--node-dead-after=" + nodesDeadAfter.String()}})
	return c.api
}

// nodeNetns makes network namespace wcl-<pid>-<i> with lo up and a veth
// pair 10.241.<i>.1/30 (host) to 10.241.<i>.2/30 (inside), and removes
// both when t ends (after the node in it, whose cleanup runs first).
func nodeNetns(t testing.TB, i int) (ns, addr string) {
	t.Helper()
	ns = fmt.Sprintf("wcl-%d-%d", os.Getpid(), i)
	host := fmt.Sprintf("wcl%dh%d", os.Getpid(), i) // at most 15 bytes: pids have at most 7 digits
	ip(t, "netns", "add", ns)
	t.Cleanup(func() { ipCleanup(t, "netns", "del", ns) })
	ip(t, "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns)
	t.Cleanup(func() { ipCleanup(t, "link", "del", host) })
	ip(t, "addr", "add", fmt.Sprintf("10.241.%d.1/30", i), "dev", host)
	ip(t, "link", "set", host, "up")
	ip(t, "-n", ns, "addr", "add", fmt.Sprintf("10.241.%d.2/30", i), "dev", "eth0")
	ip(t, "-n", ns, "link", "set", "eth0", "up")
	ip(t, "-n", ns, "link", "set", "lo", "up")
	return ns, fmt.Sprintf("10.241.%d.2:3000", i)
}

func ip(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// ipCleanup is ip for cleanups: a link already gone with its netns is fine.
func ipCleanup(t testing.TB, args ...string) {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "Cannot find device") {
		t.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// kill SIGKILLs node nd, as a lost machine stops. Its sandboxes keep
// running on this host, so a cleanup restarts it on its data dir if the
// test has not by then: the restart reconciles them (destroys those the
// store no longer has, re-adopts the others for the cleanup to kill).
func (c *cluster) kill(t *testing.T, nd *clusterNode) {
	sigkill(t, nd.srv)
	dead := nd.srv
	t.Cleanup(func() {
		if nd.srv == dead {
			t.Logf("restarting %s to reclaim its sandboxes", nd.name)
			c.restart(t, nd)
		}
	})
}

// restart starts nd again on its data dir, in its netns.
func (c *cluster) restart(t testing.TB, nd *clusterNode) {
	nd.srv = launchServer(t, c.cfg, nd.opts)
}

func (c *cluster) nodeClient(t testing.TB, nd *clusterNode) *warren.Client {
	cl, err := warren.New(warren.Config{APIURL: nd.srv.url, APIKey: c.key, SandboxURL: nd.srv.url, Domain: c.cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// wantAlive polls cl's GET /nodes until every node is listed, alive
// unless named in dead.
func (c *cluster) wantAlive(t testing.TB, cl *warren.Client, dead map[string]bool) {
	t.Helper()
	want := map[string]bool{}
	for _, nd := range c.nodes {
		want[nd.name] = !dead[nd.name]
	}
	within := time.Minute
	if len(dead) > 0 {
		within = nodesDeadAfter + 2*nodesHeartbeat + 5*time.Second
	}
	err := testutil.Poll(within, 200*time.Millisecond, func() error {
		nodes, err := cl.Nodes(context.Background())
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, n := range nodes {
			got[n.Name] = n.Alive
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("nodes alive %v, want %v", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("GET /nodes: %v", err)
	}
}

// leftOf lists what of sandbox id is still on this host: its runtime
// state dir (under /run/warren/<data dir hash>/<runtime>/), its cgroup
// (under the node's own parent, warren-<name>),
// its netns file and its state dir in nd's data dir.
func leftOf(nd *clusterNode, id string) []string {
	var left []string
	for _, pattern := range []string{
		"/run/warren/*/*/" + id,
		"/sys/fs/cgroup/warren-" + nd.name + "/" + id,
		"/sys/fs/cgroup/*/warren-" + nd.name + "/" + id,
		fmt.Sprintf("/run/netns/we2e%d-%s", nd.opts.index, id),
		filepath.Join(nd.opts.dataDir, "sandboxes", "*", id),
	} {
		m, _ := filepath.Glob(pattern)
		left = append(left, m...)
	}
	return left
}
