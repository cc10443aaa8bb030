package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres"
	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestAPIRole drives two nodes through one `warren serve --role=api` with
// the Go SDK: creates spread over both; commands, files and a signed URL
// reach the right node through the API; the API lists all, snapshots and
// creates from the snapshot on the node that keeps it. Then node B is
// cut off (SIGSTOP, as a partition would): within the bound its running
// sandboxes leave the list, answer 404 and have a killed event with reason
// node-lost, A's keep working and new creates go to A. When B comes back
// (SIGCONT) it destroys the sandboxes the cluster gave up. `warren nodes`
// shows B dead meanwhile and forgets it; it registers again on return.
func TestAPIRole(t *testing.T) {
	cfg := loadConfig(t)
	url := pgtest.Start(t).NewDatabase(t)
	ob, b, api := twoNodesAndAPI(t, cfg, url, 175, cfg.runtimes[0])
	ctx := t.Context()
	c := goClient(t, cfg, api)
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	byNode := map[string][]*warren.Sandbox{}
	for i := range 4 {
		sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
		if err != nil {
			t.Fatalf("create %d through the API: %v", i, err)
		}
		rec, err := st.GetSandbox(ctx, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		byNode[rec.Node] = append(byNode[rec.Node], sb)
	}
	if len(byNode["node-a"]) != 2 || len(byNode["node-b"]) != 2 {
		t.Fatalf("4 creates placed %d on A and %d on B, want 2 and 2", len(byNode["node-a"]), len(byNode["node-b"]))
	}
	all := append(append([]*warren.Sandbox(nil), byNode["node-a"]...), byNode["node-b"]...)
	for _, sb := range all {
		useThroughAPI(ctx, t, sb)
	}
	wantListed(ctx, t, c, ids(all)...)
	snapshotThroughAPI(ctx, t, c, st, byNode["node-b"][0])

	// B goes silent; its sandboxes are reported lost within the bound.
	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(b.cmd.Process.Pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	lostIDs := ids(byNode["node-b"])
	waitLost(ctx, t, c, lostIDs, nodesDeadAfter+2*nodesHeartbeat+10*time.Second)
	t.Logf("node B's sandboxes reported lost %v after it went silent (bound %v + reap interval %v)",
		time.Since(stopped).Round(100*time.Millisecond), nodesDeadAfter, nodesHeartbeat)
	wantListed(ctx, t, c, ids(byNode["node-a"])...)
	// The documented bound, from B's last heartbeat (one machine: one clock).
	nodes, err := st.ListNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checked := false
	for _, n := range nodes {
		if n.Name != "node-b" {
			continue
		}
		checked = true
		for _, id := range lostIDs {
			if took := wantNodeLostEvent(ctx, t, c, id).Sub(n.HeartbeatAt); took > nodesDeadAfter+nodesHeartbeat {
				t.Errorf("sandbox %s reported lost %v after B's last heartbeat, over the bound %v + %v", id, took, nodesDeadAfter, nodesHeartbeat)
			} else {
				t.Logf("sandbox %s reported lost %v after B's last heartbeat", id, took.Round(time.Millisecond))
			}
		}
	}
	if !checked {
		t.Fatalf("node-b is not in the store's nodes %v", nodes)
	}
	for _, sb := range byNode["node-a"] {
		wantEcho(ctx, t, sb, "survivor")
	}
	later, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatalf("create with B silent: %v", err)
	}
	wantNodeOf(ctx, t, st, later.ID, "node-a")
	wantEcho(ctx, t, later, "after")
	nodesCLI(t, cfg, api)

	// B back: it destroys what the cluster gave up.
	resume()
	waitNoNetns(t, ob, lostIDs, 30*time.Second)
	wantNodes(ctx, t, c, map[string]bool{"node-a": true, "node-b": true}, time.Minute)
}

// twoNodesAndAPI starts node-a and node-b on runtime (server indexes
// index and index+1), each with extra flags nodeArgs, and an API in
// front of them (index+2), and waits until the API sees both alive. It
// returns node B's options and process, and the API's.
func twoNodesAndAPI(t *testing.T, cfg config, url string, index int, runtime string, nodeArgs ...string) (serverOpts, *server, *server) {
	t.Helper()
	key := newAPIKey(t)
	oa, ob := nodeOpts(t, cfg, index, "node-a", url, key), nodeOpts(t, cfg, index+1, "node-b", url, key)
	oa.runtime, ob.runtime = runtime, runtime
	oa.args, ob.args = append(oa.args, nodeArgs...), append(ob.args, nodeArgs...)
	launchServer(t, cfg, oa)
	b := launchServer(t, cfg, ob)
	api := launchServer(t, cfg, serverOpts{index: index + 2, runtime: runtime, apiKey: key,
		args: []string{"--role=api", "--store", url, "--heartbeat-interval=" + nodesHeartbeat.String(),
			"--node-dead-after=" + nodesDeadAfter.String()}})
	wantNodes(t.Context(), t, goClient(t, cfg, api), map[string]bool{"node-a": true, "node-b": true}, time.Minute)
	return ob, b, api
}

// nodesCLI checks `warren nodes` with B silent: the table shows it dead,
// A cannot be forgotten (alive) and B can (it registers again when it
// comes back).
func nodesCLI(t *testing.T, cfg config, api *server) {
	t.Helper()
	dir := t.TempDir()
	out, err := warrenCLI(t, cfg, api, dir, "nodes")
	if err != nil || !regexp.MustCompile(`(?m)^node-a\s+alive`).MatchString(out) || !regexp.MustCompile(`(?m)^node-b\s+dead`).MatchString(out) {
		t.Fatalf("warren nodes: %v\n%s", err, out)
	}
	if out, err := warrenCLI(t, cfg, api, dir, "nodes", "rm", "node-a"); err == nil || !strings.Contains(out, "is alive") {
		t.Fatalf("warren nodes rm of a live node: %v\n%s", err, out)
	}
	if out, err := warrenCLI(t, cfg, api, dir, "nodes", "rm", "node-b"); err != nil {
		t.Fatalf("warren nodes rm node-b: %v\n%s", err, out)
	}
}

// useThroughAPI runs a command, writes and reads a file, and fetches it
// by a signed URL without the key, all through the API process.
func useThroughAPI(ctx context.Context, t *testing.T, sb *warren.Sandbox) {
	t.Helper()
	wantEcho(ctx, t, sb, "hello-"+sb.ID)
	if _, err := sb.Files.Write(ctx, "routed.txt", []byte("for "+sb.ID), warren.FileOptions{}); err != nil {
		t.Fatalf("write in %s: %v", sb.ID, err)
	}
	got, err := sb.Files.Read(ctx, "routed.txt", warren.FileOptions{})
	if err != nil || string(got) != "for "+sb.ID {
		t.Fatalf("read in %s: %q, %v", sb.ID, got, err)
	}
	res, err := harnessClient.Get(sb.Files.DownloadURL("routed.txt", warren.URLOptions{Expires: time.Minute}))
	if err != nil {
		t.Fatalf("signed URL of %s: %v", sb.ID, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != "for "+sb.ID {
		t.Fatalf("signed URL of %s: %s %q", sb.ID, res.Status, body)
	}
}

// snapshotThroughAPI snapshots sb (on B) and creates from the snapshot
// three times: each lands on B, where its files are.
func snapshotThroughAPI(ctx context.Context, t *testing.T, c *warren.Client, st *postgres.Store, sb *warren.Sandbox) {
	t.Helper()
	if _, err := sb.Files.Write(ctx, "kept.txt", []byte("snapshotted"), warren.FileOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Snapshot(ctx, sb.ID, "api-role-snap")
	if err != nil {
		t.Fatalf("snapshot through the API: %v", err)
	}
	time.Sleep(2 * nodesHeartbeat) // B's heartbeat lists it
	for range 3 {
		from, err := c.Create(ctx, "api-role-snap", warren.CreateOptions{Timeout: 10 * time.Minute})
		if err != nil {
			t.Fatalf("create from snapshot %s: %v", snap.ID, err)
		}
		wantNodeOf(ctx, t, st, from.ID, "node-b")
		got, err := from.Files.Read(ctx, "kept.txt", warren.FileOptions{})
		if err != nil || string(got) != "snapshotted" {
			t.Fatalf("file in a sandbox from the snapshot: %q, %v", got, err)
		}
		if err := from.Kill(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// waitLost waits until every sandbox in lost is gone from the API's list
// and answers 404.
func waitLost(ctx context.Context, t *testing.T, c *warren.Client, lost []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := 0
		for _, id := range lost {
			if _, err := c.Info(ctx, id); !errors.Is(err, warren.ErrNotFound) {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %v still known %v after their node went silent", left, lost, within)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// wantNodeLostEvent checks id's last event: killed, reason node-lost; it
// returns the event's time.
func wantNodeLostEvent(ctx context.Context, t *testing.T, c *warren.Client, id string) time.Time {
	t.Helper()
	evs, err := c.SandboxEvents(ctx, id, warren.EventOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == warren.EventKilled && e.Data["reason"] == "node-lost" {
			return e.Time
		}
	}
	t.Fatalf("events of lost sandbox %s: %+v, want killed with reason node-lost", id, evs)
	return time.Time{}
}

// waitNoNetns waits until none of ids has a network namespace of the
// node's bridge left: the node destroyed them.
func waitNoNetns(t *testing.T, o serverOpts, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var left []string
		for _, id := range ids {
			p := filepath.Join("/run/netns", fmt.Sprintf("we2e%d-%s", o.index, id))
			if _, err := os.Stat(p); err == nil {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandboxes the cluster reported lost still run on their node after it came back: %v", left)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func ids(sbs []*warren.Sandbox) []string {
	out := make([]string, len(sbs))
	for i, sb := range sbs {
		out[i] = sb.ID
	}
	return out
}
