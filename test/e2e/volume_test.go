package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server indexes of the volume tests (bridges we2e240.., subnets
// 10.231.240-249.0/24): the suite takes volumeIndex+i for runtime i, the
// dashboard, the benchmarks and the cluster the ones after.
const (
	volumeIndex          = 240
	volumeDashboardIndex = 242
	volumeBenchIndex     = 243 // and 244
	volumeClusterIndex   = 246 // node-a, node-b, the API: 246-248
)

// volumeSizeMB is the size limit the volume suite's server gives every
// volume: small, so that filling one is quick.
const volumeSizeMB = 16

// volumeSuiteTimeout bounds one node run of the volume tests.
const volumeSuiteTimeout = 4 * time.Minute

// TestVolumes drives E2B's Volume class and volumeMounts with the official
// JS SDK (volume/*.test.mjs) against `warren serve` on each runtime,
// started with --volume-size-mb 16: every Volume method, sandboxes
// mounting and sharing a volume, a volume outliving its sandbox, a full
// volume, another team's key and DELETE while mounted. Then the server is
// restarted under a running and a paused sandbox that mount a volume
// (volume/restart.mjs): data, mounts and token stay, the paused one
// resumes with its mount.
func TestVolumes(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			o := serverOpts{index: volumeIndex + i, runtime: rt, dataDir: t.TempDir(),
				args: []string{fmt.Sprintf("--volume-size-mb=%d", volumeSizeMB), "--checkpoint-after=0"}}
			srv := launchServer(t, cfg, o)
			requireVolumeAPI(t, srv)
			t.Cleanup(func() { deleteVolumes(t, srv) })
			runVolumeNode(t, cfg, srv, []string{"E2E_DATA_DIR=" + o.dataDir, fmt.Sprintf("E2E_VOLUME_SIZE_MB=%d", volumeSizeMB)},
				"--test", "--test-force-exit", "--test-reporter=spec", "--test-concurrency=4",
				"volume/api.test.mjs", "volume/mounts.test.mjs", "volume/teams.test.mjs", "volume/full.test.mjs")
			if t.Failed() {
				return
			}

			state := "E2E_STATE=" + filepath.Join(t.TempDir(), "state.json")
			runVolumeNode(t, cfg, srv, []string{state}, "volume/restart.mjs", "before")
			if t.Failed() {
				return
			}
			srv.stopLeavingSandboxes(t)
			o.apiKey = srv.apiKey
			again := launchServer(t, cfg, o)
			t.Cleanup(func() { deleteVolumes(t, again) })
			runVolumeNode(t, cfg, again, []string{state}, "volume/restart.mjs", "after")
			again.checkNoSandboxes(t)
		})
	}
}

// requireVolumeAPI fails t unless srv makes and deletes a volume.
func requireVolumeAPI(t testing.TB, srv *server) {
	t.Helper()
	name := "probe-" + strings.ToLower(srv.apiKey[len(srv.apiKey)-8:])
	status, body := volumeCall(t, srv, http.MethodPost, "/volumes", `{"name":"`+name+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("POST /volumes = %d %s; want 201", status, body)
	}
	id := jsonField(t, body, "volumeID")
	if status, body := volumeCall(t, srv, http.MethodDelete, "/volumes/"+id, ""); status != http.StatusNoContent {
		t.Fatalf("DELETE /volumes/%s = %d %s; want 204", id, status, body)
	}
}

// runVolumeNode runs node with args in test/e2e against srv, with the
// volume content API at the server's address, and fails t if it fails.
func runVolumeNode(t *testing.T, cfg config, srv *server, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), volumeSuiteTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = cfg.e2eDir
	cmd.Env = append(append(environWithout("E2B_", "E2E_"),
		"E2E_SDK=e2b",
		"E2E_RUNTIME="+srv.runtime,
		"E2B_API_KEY="+srv.apiKey,
		"E2B_API_URL="+srv.url,
		"E2B_SANDBOX_URL="+srv.url,
		"E2B_VOLUME_API_URL="+srv.url,
		"E2B_DOMAIN="+cfg.domain,
	), env...)
	cmd.WaitDelay = 10 * time.Second
	out := &lineLog{t: t, live: testing.Verbose()}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	out.flush()
	if err != nil {
		if !out.live {
			t.Log(out.String())
		}
		srv.failures = append(srv.failures, fmt.Sprintf("node %s:\n%s", strings.Join(args, " "), out.failing(80)))
		t.Errorf("node %s against %s: %v (after %v)", strings.Join(args, " "), srv.url, err, time.Since(start).Round(time.Second))
		return
	}
	t.Logf("node %s: passed in %v", strings.Join(args, " "), time.Since(start).Round(time.Second))
}
