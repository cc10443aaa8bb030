package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres"
	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// Faults of the shared store. The outage is longer than --node-dead-after
// (nodesDeadAfter): an API role that counted it against the nodes, which
// could not heartbeat either, would report every sandbox lost.
const (
	pgOutage      = 8 * time.Second
	recoverWithin = 30 * time.Second
)

// faultNodeArgs keep the fault tests' nodes from building the code
// interpreter's template, which they do not use: what is tested is what
// the store's faults do.
var faultNodeArgs = []string{"--code-interpreter=false"}

// TestClusterPostgresRestart: two nodes and one API role on a Postgres
// that is stopped (fast shutdown, as an operator's restart) and started
// again while three clients create sandboxes, run commands in them and
// kill them through the API. Creates refused meanwhile get 503 with
// Retry-After, nothing hangs or answers 500; within recoverWithin of the
// restart the cluster works again by itself; every sandbox made before
// still runs a command, and what the store lists and what runs on the
// nodes are exactly the sandboxes the clients were given: none lost,
// none doubled, none left behind.
func TestClusterPostgresRestart(t *testing.T) {
	cfg := loadConfig(t)
	pg := pgtest.Start(t)
	url := pg.NewDatabase(t)
	const index = 210
	_, _, api := twoNodesAndAPI(t, cfg, url, index, cfg.runtimes[0], faultNodeArgs...)
	ctx := t.Context()
	c := goClient(t, cfg, api)

	var before []*warren.Sandbox
	for i := range 4 {
		sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute,
			Metadata: map[string]string{"op": fmt.Sprintf("before-%d", i)}})
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		before = append(before, sb)
	}
	load := startFaultLoad(t, cfg, api, 3, before)
	time.Sleep(3 * time.Second)
	down := time.Now() // the shutdown begins
	pg.Stop(t)
	time.Sleep(pgOutage)
	pg.Resume(t)
	up := time.Now()
	recovered := waitRecovered(ctx, t, c, up)
	t.Logf("Postgres out %v; the cluster served a create, a command and a kill %v after its restart",
		up.Sub(down).Round(100*time.Millisecond), recovered.Sub(up).Round(100*time.Millisecond))
	time.Sleep(3 * time.Second) // the load runs on the recovered cluster
	load.finish()
	load.check(t, down.Add(-time.Second), recovered)

	for _, sb := range before {
		wantEcho(ctx, t, sb, "survived-"+sb.ID)
	}
	for id, sb := range load.pending {
		wantEcho(ctx, t, sb, "pending-"+id)
		if err := sb.Kill(ctx); err != nil {
			t.Errorf("kill of %s after the restart: %v", id, err)
		}
	}
	// Records of sandboxes destroyed while the store was out go once it
	// is back, within a few seconds.
	if err := testutil.Poll(20*time.Second, 500*time.Millisecond, func() error {
		return exactly(ctx, c, load.created, ids(before))
	}); err != nil {
		t.Error(err)
	}
	wantNetns(t, []int{index, index + 1}, ids(before))
	wantNodes(ctx, t, c, map[string]bool{"node-a": true, "node-b": true}, time.Minute)
}

// waitRecovered polls until a create, a command and a kill through c all
// succeed, and returns when they did.
func waitRecovered(ctx context.Context, t *testing.T, c *warren.Client, up time.Time) time.Time {
	t.Helper()
	err := testutil.Poll(recoverWithin-time.Since(up), 500*time.Millisecond, func() error {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		sb, err := c.Create(cctx, "base", warren.CreateOptions{Timeout: time.Minute})
		if err != nil {
			return err
		}
		defer sb.Kill(context.WithoutCancel(ctx)) //nolint:errcheck // checked below when it matters
		if _, err := sb.Commands.Run(cctx, "true", warren.CommandOptions{}); err != nil {
			return err
		}
		return sb.Kill(cctx)
	})
	if err != nil {
		t.Fatalf("the cluster did not recover within %v of the store's restart: %v", recoverWithin, err)
	}
	return time.Now()
}

// exactly checks that the API lists exactly the sandboxes want, each
// once: a sandbox a client was never given (a create doubled by a retry)
// or one whose record outlived it would show here.
func exactly(ctx context.Context, c *warren.Client, created map[string]string, want []string) error {
	list, _, err := c.List(ctx, warren.ListOptions{})
	if err != nil {
		return fmt.Errorf("List: %w", err)
	}
	var got, errs []string
	ops := map[string]string{}
	for _, in := range list {
		op := in.Metadata["op"]
		if prev, ok := ops[op]; ok {
			errs = append(errs, fmt.Sprintf("create %s made two sandboxes: %s and %s", op, prev, in.ID))
		}
		ops[op] = in.ID
		if _, ok := created[in.ID]; !ok && !slices.Contains(want, in.ID) {
			errs = append(errs, fmt.Sprintf("sandbox %s (create %q) is listed but no client was given it", in.ID, op))
		}
		got = append(got, in.ID)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		errs = append(errs, fmt.Sprintf("listed %v, want %v", got, want))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// wantNetns waits until the network namespaces of the nodes' bridges
// (server indexes) name exactly the sandboxes want: what was killed or
// never recorded does not run on.
func wantNetns(t *testing.T, indexes []int, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var got []string
	err := testutil.Poll(20*time.Second, 250*time.Millisecond, func() error {
		got = nil
		for _, i := range indexes {
			prefix := fmt.Sprintf("/run/netns/we2e%d-", i)
			m, _ := filepath.Glob(prefix + "*")
			for _, p := range m {
				got = append(got, strings.TrimPrefix(p, prefix))
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("sandboxes running on the nodes %v, want %v", got, want)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestClusterNodePartition cuts node B's path to Postgres, and only that
// (a drop rule in B's own network namespace; B's API and its sandboxes
// stay reachable). A cut shorter than --node-dead-after changes nothing:
// B's sandboxes run on, answer through the API and stay listed. A longer one: the API reports
// them lost (404, a node-lost event) while they still run commands
// through B's own address, and creates go to node A. When the link
// returns B beats again and destroys the sandboxes the cluster gave up,
// leaving nothing of them, and takes creates again.
func TestClusterNodePartition(t *testing.T) {
	cfg := loadConfig(t)
	const index = 213
	ns, addr := nodeNetns(t, index)
	pgHost := fmt.Sprintf("10.241.%d.1", index)
	pg := pgtest.StartWith(t, pgtest.Options{Listen: pgHost, Trust: []string{fmt.Sprintf("10.241.%d.0/30", index)}})
	url := pg.NewDatabase(t)
	key := newAPIKey(t)
	oa := nodeOpts(t, cfg, index, "node-a", url, key)
	oa.args = append(oa.args, faultNodeArgs...)
	launchServer(t, cfg, oa)
	ob := nodeOpts(t, cfg, index+1, "node-b", pg.URLOver(t, url), key)
	ob.netns, ob.listen, ob.args = ns, addr, append(ob.args, faultNodeArgs...)
	for j, a := range ob.args {
		if strings.HasPrefix(a, "--advertise-url=") {
			ob.args[j] = "--advertise-url=http://" + addr
		}
	}
	b := launchServer(t, cfg, ob)
	api := launchServer(t, cfg, serverOpts{index: index + 2, api: true, apiKey: key,
		args: []string{"--role=api", "--store", url, "--heartbeat-interval=" + nodesHeartbeat.String(),
			"--node-dead-after=" + nodesDeadAfter.String()}})
	ctx := t.Context()
	c := goClient(t, cfg, api)
	wantNodes(ctx, t, c, map[string]bool{"node-a": true, "node-b": true}, time.Minute)
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	nb := goClient(t, cfg, b) // B's own address
	var onB []*warren.Sandbox
	for range 2 {
		sb, err := nb.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
		if err != nil {
			t.Fatalf("create on node B: %v", err)
		}
		onB = append(onB, sb)
	}

	var viaAPI []*warren.Sandbox
	for _, id := range ids(onB) {
		sb, err := c.Connect(ctx, id, 0)
		if err != nil {
			t.Fatalf("connect to %s through the API: %v", id, err)
		}
		viaAPI = append(viaAPI, sb)
	}

	heal := cutFromStore(t, ns, pgHost)
	time.Sleep(nodesDeadAfter * 2 / 5)
	for i := range onB {
		wantEcho(ctx, t, onB[i], "short-cut")
		wantEcho(ctx, t, viaAPI[i], "short-cut-through-api")
	}
	heal()
	time.Sleep(2 * nodesHeartbeat)
	wantListed(ctx, t, c, ids(onB)...)
	for _, sb := range viaAPI {
		wantEcho(ctx, t, sb, "through-api")
	}

	heal = cutFromStore(t, ns, pgHost)
	cut := time.Now()
	waitLost(ctx, t, c, ids(onB), nodesDeadAfter+2*nodesHeartbeat+10*time.Second)
	t.Logf("node B's sandboxes reported lost %v after its link to the store was cut", time.Since(cut).Round(100*time.Millisecond))
	wantNodeLostEvent(ctx, t, c, onB[0].ID)
	for _, sb := range onB {
		wantEcho(ctx, t, sb, "still-running") // through B, which does not know yet
	}
	later, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatalf("create with B cut off: %v", err)
	}
	wantNodeOf(ctx, t, st, later.ID, "node-a")

	heal()
	waitNoNetns(t, ob, ids(onB), 30*time.Second)
	nd := &clusterNode{name: "node-b", opts: ob}
	if err := testutil.Poll(10*time.Second, 250*time.Millisecond, func() error {
		for _, id := range ids(onB) { // the netns goes first: a destroy may still be under way
			if left := leftOf(nd, id); len(left) > 0 {
				return fmt.Errorf("left of lost sandbox %s on node B after the link returned: %v", id, left)
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	wantNodes(ctx, t, c, map[string]bool{"node-a": true, "node-b": true}, time.Minute)
	again, err := nb.Create(ctx, "base", warren.CreateOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatalf("create on node B after the link returned: %v", err)
	}
	wantEcho(ctx, t, again, "back")
	wantListed(ctx, t, c, later.ID, again.ID)
}

// cutFromStore drops, in network namespace ns, every packet to Postgres
// at pgHost: the node there can no longer reach the store, and nothing
// else changes. It returns the function that restores the link (also
// run when t ends).
func cutFromStore(t *testing.T, ns, pgHost string) (heal func()) {
	t.Helper()
	rules := fmt.Sprintf(`table inet warren_fault {
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr %s tcp dport 5432 drop
	}
}
`, pgHost)
	nft := func(stdin string, args ...string) error {
		cmd := exec.Command("nsenter", append([]string{"--net=/run/netns/" + ns, "--", "nft"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("nft %v in %s: %v: %s", args, ns, err, out)
		}
		return nil
	}
	if err := nft(rules, "-f", "-"); err != nil {
		t.Fatal(err)
	}
	healed := false
	heal = func() {
		if !healed {
			healed = true
			if err := nft("", "delete", "table", "inet", "warren_fault"); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(heal)
	return heal
}
