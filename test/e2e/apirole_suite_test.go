package e2e

import (
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
)

// TestAPIRoleSDKSuite runs the official JS SDKs' suites (sdk/*.test.mjs
// with the newest SDK, the code interpreter's ci/ and the template
// builds' template/) against a `warren serve --role=api` in front of two
// nodes: everything the SDKs do against one machine must work through the
// API role's placement and forwarding.
func TestAPIRoleSDKSuite(t *testing.T) {
	cfg := loadConfig(t)
	url := pgtest.Start(t).NewDatabase(t)
	key := newAPIKey(t)
	launchServer(t, cfg, nodeOpts(t, cfg, 178, "suite-a", url, key))
	launchServer(t, cfg, nodeOpts(t, cfg, 179, "suite-b", url, key))
	api := launchServer(t, cfg, serverOpts{index: 174, runtime: cfg.runtimes[0], apiKey: key,
		args: []string{"--role=api", "--store", url, "--heartbeat-interval=" + nodesHeartbeat.String(),
			"--node-dead-after=" + nodesDeadAfter.String()}})
	wantNodes(t.Context(), t, goClient(t, cfg, api), map[string]bool{"suite-a": true, "suite-b": true}, time.Minute)
	t.Run("sdk", func(t *testing.T) { runSDKSuite(t, cfg, api, cfg.sdks[0]) })
	// What the API role adds to the interpreter is the route to port 49999
	// on the sandbox's node: Python and contexts cross it; the other
	// languages run behind the same route and are covered by TestE2E.
	t.Run("code-interpreter", func(t *testing.T) {
		runNodeSuite(t, cfg, api, "ci", "e2b", "^runCode \\(python\\)", "^contexts")
	})
	t.Run("templates", func(t *testing.T) { runNodeSuite(t, cfg, api, "template", "e2b") })
	api.checkNoSandboxes(t)
}
