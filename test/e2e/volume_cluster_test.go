package e2e

import (
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
)

// TestVolumesCluster: two nodes sharing a directory (--shared-dir, as
// every node would mount one NFS share) behind one API role. One volume,
// made through the API, is mounted by a sandbox on each node
// (volume/cluster.mjs creates them on the nodes themselves, so where each
// runs is known); a write on one node is read on the other, and the API
// role's content API reads and writes the same files.
func TestVolumesCluster(t *testing.T) {
	cfg := loadConfig(t)
	rt := defaultRuntime(cfg.runtimes)
	shared := t.TempDir()
	key := newAPIKey(t)
	url := pgtest.Start(t).NewDatabase(t)
	var nodes [2]*server
	for i, name := range []string{"node-a", "node-b"} {
		o := nodeOpts(t, cfg, volumeClusterIndex+i, name, url, key)
		o.runtime = rt
		o.args = append(o.args, "--shared-dir="+shared)
		nodes[i] = launchServer(t, cfg, o)
	}
	api := launchServer(t, cfg, serverOpts{index: volumeClusterIndex + 2, runtime: rt, apiKey: key,
		args: []string{"--role=api", "--store", url, "--heartbeat-interval=" + nodesHeartbeat.String(),
			"--node-dead-after=" + nodesDeadAfter.String()}})
	wantNodes(t.Context(), t, goClient(t, cfg, api), map[string]bool{"node-a": true, "node-b": true}, time.Minute)
	requireVolumeAPI(t, api)
	t.Cleanup(func() { deleteVolumes(t, api) })
	runVolumeNode(t, cfg, api, []string{"E2E_NODE_A_URL=" + nodes[0].url, "E2E_NODE_B_URL=" + nodes[1].url}, "volume/cluster.mjs")
}
