package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres"
	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// Cluster timings of TestNodes: short, so a dead node shows within seconds.
const (
	nodesHeartbeat = time.Second
	nodesDeadAfter = 5 * time.Second
)

// TestNodes runs two `warren serve --role=node` on one Postgres, each on
// its own loopback port, bridge and subnet: both register and heartbeat;
// each stamps its name on the sandbox made through its API; restarting
// node A re-adopts A's sandbox and leaves B's alone (B's still runs a
// command); after B is SIGKILLed, A's GET /nodes reports it dead within
// the bound.
func TestNodes(t *testing.T) {
	cfg := loadConfig(t)
	url := pgtest.Start(t).NewDatabase(t)
	key := newAPIKey(t) // the cluster's admin key, on both nodes
	oa, ob := nodeOpts(t, cfg, 180, "node-a", url, key), nodeOpts(t, cfg, 181, "node-b", url, key)
	// One after the other: the first start builds the templates both use.
	a, b := launchServer(t, cfg, oa), launchServer(t, cfg, ob)
	ctx := t.Context()
	ca, cb := goClient(t, cfg, a), goClient(t, cfg, b)
	wantNodes(ctx, t, ca, map[string]bool{"node-a": true, "node-b": true}, time.Minute)
	wantLayersRefuseKeys(t, b)

	sa, err := ca.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatalf("Create on node A: %v", err)
	}
	sb, err := cb.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatalf("Create on node B: %v", err)
	}
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wantNodeOf(ctx, t, st, sa.ID, "node-a")
	wantNodeOf(ctx, t, st, sb.ID, "node-b")
	wantListed(ctx, t, ca, sa.ID) // a node lists its own
	wantListed(ctx, t, cb, sb.ID)
	wantRunning(ctx, t, ca, map[string]int{"node-a": 1, "node-b": 1})

	a.stopLeavingSandboxes(t)
	a2 := launchServer(t, cfg, oa)
	ca = goClient(t, cfg, a2)
	wantListed(ctx, t, ca, sa.ID)
	again, err := ca.Connect(ctx, sa.ID, time.Minute)
	if err != nil {
		t.Fatalf("Connect to A's sandbox after A's restart: %v", err)
	}
	wantEcho(ctx, t, again, "readopted")
	wantNodeOf(ctx, t, st, sb.ID, "node-b")
	wantListed(ctx, t, cb, sb.ID)
	wantEcho(ctx, t, sb, "untouched")

	// B's sandbox goes first: a SIGKILLed node leaves its sandboxes
	// running on a host (not in a pod), and nothing else would kill it.
	if err := sb.Kill(ctx); err != nil {
		t.Fatalf("Kill on node B: %v", err)
	}
	sigkill(t, b)
	killed := time.Now()
	wantNodes(ctx, t, ca, map[string]bool{"node-a": true, "node-b": false}, nodesDeadAfter+2*nodesHeartbeat+5*time.Second)
	t.Logf("node B reported dead %v after its SIGKILL (bound %v)", time.Since(killed).Round(100*time.Millisecond), nodesDeadAfter)

	// B back on its data dir: alive again, and its clean stop removes the
	// bridge and rules its SIGKILL left.
	b2 := launchServer(t, cfg, ob)
	wantNodes(ctx, t, ca, map[string]bool{"node-a": true, "node-b": true}, time.Minute)
	b2.stop(t)
}

// sigkill kills s by its PID, as a lost machine would stop, and waits
// for it to exit.
func sigkill(t testing.TB, s *server) {
	t.Helper()
	s.crashed = true
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL warren serve (pid %d): %v", s.cmd.Process.Pid, err)
	}
	<-s.exited
}

// nodeOpts are node name's server options: its own port, bridge, subnet
// and data dir, on the shared store.
func nodeOpts(t testing.TB, cfg config, index int, name, url, key string) serverOpts {
	addr := freeLoopbackAddr(t)
	return serverOpts{index: index, runtime: cfg.runtimes[0], dataDir: t.TempDir(), apiKey: key, listen: addr,
		args: []string{"--role=node", "--node-name=" + name, "--advertise-url=http://" + addr, "--store", url,
			"--heartbeat-interval=" + nodesHeartbeat.String(), "--node-dead-after=" + nodesDeadAfter.String()}}
}

// wantNodes polls GET /nodes until it lists exactly the nodes in want,
// each alive or dead as want says.
func wantNodes(ctx context.Context, t *testing.T, c *warren.Client, want map[string]bool, within time.Duration) {
	t.Helper()
	err := testutil.Poll(within, 200*time.Millisecond, func() error {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return err
		}
		if len(nodes) != len(want) {
			return fmt.Errorf("nodes %+v, want %v", nodes, want)
		}
		for _, n := range nodes {
			alive, ok := want[n.Name]
			if !ok || n.Alive != alive {
				return fmt.Errorf("node %s alive=%v (heartbeat %v), want %v", n.Name, n.Alive, n.HeartbeatAt, want)
			}
			if n.CPUs <= 0 || n.MemoryMB <= 0 || n.DiskMB <= 0 || n.AdvertiseURL == "" || len(n.Templates) == 0 {
				return fmt.Errorf("node %s without capacity, address or templates: %+v", n.Name, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("GET /nodes: %v", err)
	}
}

// wantRunning polls GET /nodes until each node reports running sandboxes.
func wantRunning(ctx context.Context, t *testing.T, c *warren.Client, want map[string]int) {
	t.Helper()
	err := testutil.Poll(10*nodesHeartbeat, 200*time.Millisecond, func() error {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.RunningSandboxes != want[n.Name] || (want[n.Name] > 0 && n.ReservedMemoryMB <= 0) {
				return fmt.Errorf("node %s runs %d sandboxes (%d MB), want %d", n.Name, n.RunningSandboxes, n.ReservedMemoryMB, want[n.Name])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("GET /nodes: %v", err)
	}
}

// wantNodeOf checks the node the store records for sandbox id.
func wantNodeOf(ctx context.Context, t *testing.T, st *postgres.Store, id, node string) {
	t.Helper()
	rec, err := st.GetSandbox(ctx, id)
	if err != nil {
		t.Fatalf("sandbox %s in the store: %v", id, err)
	}
	if rec.Node != node {
		t.Fatalf("sandbox %s's node = %q, want %q", id, rec.Node, node)
	}
}

// wantLayersRefuseKeys checks that node n serves its layers to the
// cluster's members only: the admin key, which a node no longer sends to
// an address the store names, is refused.
func wantLayersRefuseKeys(t *testing.T, n *server) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", n.url+"/internal/layers/"+strings.Repeat("0", 64), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", n.apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "missing cluster credential") {
		t.Fatalf("GET /internal/layers with the admin key: %d %s, want 401 asking for the cluster credential", resp.StatusCode, body)
	}
}
