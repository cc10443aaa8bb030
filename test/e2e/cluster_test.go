package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres"
	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// clusterGoneWithin bounds how long a SIGKILLed node's sandboxes stay
// listed: it is reported dead after nodesDeadAfter, and the reaper looks
// about once a heartbeat; the rest is slack for a loaded machine.
const clusterGoneWithin = nodesDeadAfter + 3*nodesHeartbeat + 7*time.Second

// TestCluster proves the cluster shape on one machine: Postgres, one
// `warren serve --role=api` and three `--role=node`, each node in a
// network namespace of its own, reached over a veth. The official JS SDK,
// pointed at the API process only (cluster/flow.mjs), creates sandboxes
// that spread over the nodes, uses them (commands, files, signed URLs),
// lists them all, and sees a SIGKILLed node's sandboxes leave the list and
// become not found within the bound while a command streams on another
// node; new creates go to the survivors. The killed node, restarted on its
// data dir, destroys its orphans and is alive again.
func TestCluster(t *testing.T) {
	cfg := loadConfig(t)
	c := startClusterNodes(t, cfg, 3)
	api := c.startAPI(t)
	st, err := postgres.Open(t.Context(), c.store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := &clusterFlow{t: t, c: c, st: st, apiClient: goClient(t, cfg, api)}
	c.wantAlive(t, f.apiClient, nil)
	runClusterFlow(t, cfg, api, f.step)

	// The victim comes back on its data dir: what the reaper deleted from
	// the store, it destroys; then it is alive again.
	c.restart(t, f.victim)
	c.wantAlive(t, f.apiClient, nil)
	err = testutil.Poll(time.Minute, 500*time.Millisecond, func() error {
		for _, id := range f.victims {
			if left := leftOf(f.victim, id); len(left) > 0 {
				return fmt.Errorf("orphan %s still on the host: %v", id, left)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("after %s's restart: %v", f.victim.name, err)
	}
	f.wantNodeLostEvents()
}

// clusterFlow is the Go side of cluster/flow.mjs: it answers each step.
type clusterFlow struct {
	t         *testing.T
	c         *cluster
	st        *postgres.Store
	apiClient *warren.Client

	victim   *clusterNode
	victims  []string  // the victim's sandboxes
	lastBeat time.Time // the victim's last heartbeat
}

type flowMsg struct {
	Step   string   `json:"step"`
	IDs    []string `json:"ids"`
	GoneMs int      `json:"goneMs"`
}

func (f *clusterFlow) step(m flowMsg) any {
	switch m.Step {
	case "created":
		return f.created(m.IDs)
	case "streaming":
		for _, id := range f.victims { // else the check after the restart proves nothing
			left := strings.Join(leftOf(f.victim, id), " ")
			for _, kind := range []string{"/run/warren/", "/sys/fs/cgroup/", "/run/netns/", f.victim.opts.dataDir} {
				if !strings.Contains(left, kind) {
					f.t.Fatalf("running sandbox %s: nothing under %s among %s", id, kind, left)
				}
			}
		}
		f.c.kill(f.t, f.victim)
		return struct{}{}
	case "recreated":
		f.c.wantAlive(f.t, f.apiClient, map[string]bool{f.victim.name: true})
		f.lastBeat = f.heartbeatOf(f.victim.name) // long after its SIGKILL, before its restart
		for _, id := range m.IDs {
			if n := f.nodeOf(id); n == f.victim.name {
				f.t.Errorf("sandbox %s created on the dead node %s", id, n)
			}
		}
		f.t.Logf("%s's sandboxes left Sandbox.list %d ms after its SIGKILL (bound %v)", f.victim.name, m.GoneMs, clusterGoneWithin)
		return struct{}{}
	}
	f.t.Fatalf("flow.mjs: unknown step %q", m.Step)
	return nil
}

// created checks that ids spread over every node, and picks the victim
// (the first sandbox's node) and a sandbox on another node to stream on.
func (f *clusterFlow) created(ids []string) any {
	byNode := map[string][]string{}
	for _, id := range ids {
		n := f.nodeOf(id)
		byNode[n] = append(byNode[n], id)
	}
	f.t.Logf("placement: %v", byNode)
	for _, nd := range f.c.nodes {
		if len(byNode[nd.name]) == 0 {
			f.t.Errorf("no sandbox on %s: placement %v", nd.name, byNode)
		}
	}
	victim := f.nodeOf(ids[0])
	f.victim = f.c.nodes[slices.IndexFunc(f.c.nodes, func(nd *clusterNode) bool { return nd.name == victim })]
	f.victims = byNode[victim]
	var survivors []string
	for _, id := range ids {
		if !slices.Contains(f.victims, id) {
			survivors = append(survivors, id)
		}
	}
	return map[string]any{"victims": f.victims, "survivors": survivors, "streamOn": survivors[0]}
}

func (f *clusterFlow) nodeOf(id string) string {
	rec, err := f.st.GetSandbox(f.t.Context(), id)
	if err != nil {
		f.t.Fatalf("sandbox %s in the store: %v", id, err)
	}
	return rec.Node
}

// heartbeatOf is node name's last heartbeat in the store.
func (f *clusterFlow) heartbeatOf(name string) time.Time {
	nodes, err := f.st.ListNodes(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.HeartbeatAt
		}
	}
	f.t.Fatalf("node %s is not in the store", name)
	return time.Time{}
}

// wantNodeLostEvents checks that each reaped sandbox has a killed event
// with reason node-lost, within the documented bound of the victim's
// last heartbeat (one machine: one clock).
func (f *clusterFlow) wantNodeLostEvents() {
	for _, id := range f.victims {
		evs, err := f.apiClient.SandboxEvents(f.t.Context(), id, warren.EventOptions{Types: []string{"sandbox.lifecycle.killed"}})
		if err != nil {
			f.t.Fatalf("events of %s: %v", id, err)
		}
		if len(evs) != 1 || evs[0].Data["reason"] != "node-lost" {
			f.t.Errorf("killed events of %s: %+v, want one with reason node-lost", id, evs)
			continue
		}
		if took := evs[0].Time.Sub(f.lastBeat); took > nodesDeadAfter+nodesHeartbeat {
			f.t.Errorf("%s reported lost %v after its node's last heartbeat, over the bound %v + %v", id, took, nodesDeadAfter, nodesHeartbeat)
		} else {
			f.t.Logf("%s reported lost %v after its node's last heartbeat", id, took.Round(time.Millisecond))
		}
	}
}

// runClusterFlow runs cluster/flow.mjs with the e2b SDK against srv and
// answers each `@@ {json}` line it prints with step's reply, one JSON
// line on its stdin; other lines go to the test log.
func runClusterFlow(t *testing.T, cfg config, srv *server, step func(flowMsg) any) {
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout(t, cfg))
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "cluster/flow.mjs")
	cmd.Dir = cfg.e2eDir
	cmd.Env = append(environWithout("E2B_", "E2E_"), "E2E_SDK=e2b", "E2E_RUNTIME="+cfg.runtimes[0],
		"E2B_API_KEY="+srv.apiKey, "E2B_API_URL="+srv.url, "E2B_SANDBOX_URL="+srv.url, "E2B_DOMAIN="+cfg.domain,
		fmt.Sprintf("E2E_CLUSTER_GONE_WITHIN_MS=%d", clusterGoneWithin.Milliseconds()))
	cmd.WaitDelay = 10 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lineLog{t: t, live: true}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answerSteps(t, stdout, stdin, step)
	stdin.Close()
	stderr.flush()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node cluster/flow.mjs against %s: %v", srv.url, err)
	}
}

func answerSteps(t *testing.T, out io.Reader, in io.Writer, step func(flowMsg) any) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "@@ ")
		if !ok {
			t.Log(sc.Text())
			continue
		}
		var m flowMsg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("flow.mjs said %q: %v", line, err)
		}
		reply, _ := json.Marshal(step(m))
		if _, err := fmt.Fprintf(in, "%s\n", reply); err != nil {
			t.Fatalf("answering %s: %v", m.Step, err)
		}
	}
}

// TestClusterNodes checks the harness without the API role: three nodes,
// each in its own netns, register and see each other alive, and each runs
// a sandbox made through its own API (bridge, nftables and cgroups inside
// a netns that is not the host's).
func TestClusterNodes(t *testing.T) {
	cfg := loadConfig(t)
	c := startClusterNodes(t, cfg, 3)
	for _, nd := range c.nodes {
		cl := c.nodeClient(t, nd)
		sb, err := cl.Create(t.Context(), "base", warren.CreateOptions{Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatalf("Create on %s: %v", nd.name, err)
		}
		wantEcho(t.Context(), t, sb, nd.name)
		if err := sb.Kill(t.Context()); err != nil {
			t.Fatalf("Kill on %s: %v", nd.name, err)
		}
		if left := leftOf(nd, sb.ID); len(left) > 0 {
			t.Errorf("after Kill on %s: %v", nd.name, left)
		}
	}
}
