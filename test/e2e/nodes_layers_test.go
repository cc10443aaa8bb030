package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/postgres"
	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/internal/template/layer"
	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestNodesPullLayers: a template built through node A (its layers in
// A's data dir) starts through node B, which pulls the layers from A
// into its own layer store on first use and then lists the template as
// cached; a build FROM that template through B works too. A template
// whose layer no node has fails the create with 503 in E2B's error
// shape, even though the recorded directory exists on this machine (it
// is A's, and B never uses another node's directory).
func TestNodesPullLayers(t *testing.T) {
	cfg := loadConfig(t)
	url := pgtest.Start(t).NewDatabase(t)
	key := newAPIKey(t)
	oa, ob := nodeOpts(t, cfg, 185, "node-a", url, key), nodeOpts(t, cfg, 186, "node-b", url, key)
	a, b := launchServer(t, cfg, oa), launchServer(t, cfg, ob)
	ctx := t.Context()
	ca, cb := goClient(t, cfg, a), goClient(t, cfg, b)
	wantNodes(ctx, t, ca, map[string]bool{"node-a": true, "node-b": true}, time.Minute)
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	ref, err := ca.BuildDockerfile(ctx, warren.DockerfileBuild{Name: "layered",
		Dir: writeDockerfile(t, "FROM base\nRUN echo layered > /opt/marker\n")})
	if err != nil {
		t.Fatalf("building through node A: %v", err)
	}
	shorts := pulledLayers(ctx, t, st, ref.TemplateID, a.dataDir)
	for _, s := range shorts {
		if _, err := os.Stat(filepath.Join(b.dataDir, "layers", s)); err == nil {
			t.Fatalf("node B has layer %s before any create", s)
		}
	}

	if got := runIn(t, b, "layered", "cat /opt/marker"); got != "layered\n" {
		t.Fatalf("/opt/marker in a sandbox on node B = %q", got)
	}
	for _, s := range shorts {
		k, err := os.ReadFile(filepath.Join(b.dataDir, "layers", s+".key"))
		if err != nil || !strings.HasPrefix(string(k), s) {
			t.Fatalf("node B's store lacks layer %s after the create: %q, %v", s, k, err)
		}
	}
	wantCachedOn(ctx, t, ca, "node-b", ref.TemplateID)

	if _, err := cb.BuildDockerfile(ctx, warren.DockerfileBuild{Name: "layered-child",
		Dir: writeDockerfile(t, "FROM layered\nRUN cp /opt/marker /opt/copy\n")}); err != nil {
		t.Fatalf("building FROM the template through node B: %v", err)
	}
	if got := runIn(t, b, "layered-child", "cat /opt/copy"); got != "layered\n" {
		t.Fatalf("/opt/copy in a sandbox of the child template = %q", got)
	}

	wantNoLayers(ctx, t, st, a, b)
}

// pulledLayers checks that template id's recorded layers (but the base
// rootfs) are in A's layer store and returns their short keys.
func pulledLayers(ctx context.Context, t *testing.T, st *postgres.Store, id, dataDirA string) []string {
	t.Helper()
	tpl, err := st.GetTemplate(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var shorts []string
	for _, p := range tpl.Layers {
		if s, ok := layer.ShortKey(p); ok {
			if filepath.Dir(p) != filepath.Join(dataDirA, "layers") {
				t.Fatalf("layer %s of the template built through A is not in A's store", p)
			}
			shorts = append(shorts, s)
		}
	}
	if len(shorts) == 0 {
		t.Fatalf("the template built through A records no store layer: %q", tpl.Layers)
	}
	return shorts
}

// wantCachedOn polls GET /nodes until node lists template id as cached.
func wantCachedOn(ctx context.Context, t *testing.T, c *warren.Client, node, id string) {
	t.Helper()
	err := testutil.Poll(10*nodesHeartbeat, 200*time.Millisecond, func() error {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.Name == node && slices.Contains(n.Templates, id) {
				return nil
			}
		}
		return errNotYet
	})
	if err != nil {
		t.Fatalf("%s never listed template %s as cached: %v", node, id, err)
	}
}

var errNotYet = errors.New("not listed yet")

// wantNoLayers records a template whose one layer no node has (its
// recorded directory, in A's data dir, exists but holds no layer A
// knows) and checks that a create through B fails with 503 in E2B's
// error shape, naming the template.
func wantNoLayers(ctx context.Context, t *testing.T, st *postgres.Store, a, b *server) {
	t.Helper()
	ghost := filepath.Join(a.dataDir, "layers", strings.Repeat("f", 20))
	if err := os.MkdirAll(filepath.Join(ghost, "opt"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ghost)
	now := time.Now().UTC()
	if err := st.PutTemplate(ctx, &store.Template{ID: "ghostlayers", Aliases: []string{"ghostlayers"}, Public: true,
		RootfsPath: ghost, Layers: []string{ghost}, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url+"/sandboxes",
		strings.NewReader(`{"templateID":"ghostlayers","timeout":60}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", b.apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := harnessClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("create from a template without layers: %d, body not E2B's error shape: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || body.Code != resp.StatusCode ||
		!strings.Contains(body.Message, "ghostlayers") || !strings.Contains(body.Message, "no node has its layers") {
		t.Fatalf("create from a template without layers = %d %+v", resp.StatusCode, body)
	}
}
