package builder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestCollectLayersByKey: a layer stays while a template, a build or a
// snapshot lists it under any node's path (a cluster node pulled it into
// its own store; the store names the building node's directory); one
// nothing lists goes, key file and all.
func TestCollectLayersByKey(t *testing.T) {
	t.Parallel()
	short := func(c byte) string { return strings.Repeat(string(c), 20) }
	nodeA := "/srv/node-a/data/layers/"
	tests := []struct {
		name  string
		short string
		put   func(ctx context.Context, st store.Store, own string) error
		kept  bool
	}{
		{"template, another node's path", short('a'), func(ctx context.Context, st store.Store, _ string) error {
			return st.PutTemplate(ctx, &store.Template{ID: "t1", Layers: []string{nodeA + short('a'), "/cache/rootfs"}, RootfsPath: "/cache/rootfs"})
		}, true},
		{"build, another node's path", short('b'), func(ctx context.Context, st store.Store, _ string) error {
			return st.CreateBuild(ctx, &store.Build{ID: "b1", TemplateID: "t1", Status: store.BuildReady, Layers: []string{nodeA + short('b')}})
		}, true},
		{"snapshot, this node's path", short('c'), func(ctx context.Context, st store.Store, own string) error {
			return st.CreateSnapshot(ctx, &store.Snapshot{ID: "s1", TemplateID: "t1", Layers: []string{own}})
		}, true},
		{"listed nowhere", short('d'), nil, false},
	}
	st := sqlitetest.Open(t)
	ctx := t.Context()
	dir := t.TempDir()
	root := filepath.Join(dir, "layers")
	for _, tc := range tests {
		own := filepath.Join(root, tc.short)
		if err := os.MkdirAll(own, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(own+".key", []byte(tc.short+strings.Repeat("0", 44)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if tc.put != nil {
			if err := tc.put(ctx, st, own); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := New(Options{Store: st, FilesDir: dir + "/files", WorkDir: dir + "/work", LayerRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CollectLayers(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			own := filepath.Join(root, tc.short)
			_, err := os.Stat(own)
			_, kerr := os.Stat(own + ".key")
			if kept := err == nil && kerr == nil; kept != tc.kept {
				t.Fatalf("layer kept = %v (dir %v, key %v), want %v", kept, err, kerr, tc.kept)
			}
		})
	}
}

// TestFromTemplateLocalLayers: a build FROM a template stacks this node's
// copies of its layers (Options.LocalTemplate), under the cache key of
// the recorded stack, which every node shares.
func TestFromTemplateLocalLayers(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	ctx := t.Context()
	recorded := []string{"/srv/node-a/layers/" + strings.Repeat("a", 20), "/cache/rootfs"}
	local := []string{"/srv/node-b/layers/" + strings.Repeat("a", 20), "/cache/rootfs"}
	if err := st.PutTemplate(ctx, &store.Template{ID: "parent", Layers: recorded, RootfsPath: recorded[1]}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var asked []string
	b, err := New(Options{Store: st, FilesDir: dir + "/files", WorkDir: dir + "/work",
		LocalTemplate: func(_ context.Context, tpl *store.Template) (*store.Template, error) {
			asked = append(asked, tpl.Layers...)
			out := *tpl
			out.Layers, out.RootfsPath = local, local[1]
			return &out, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := b.fromTemplate(ctx, "parent")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(fs.layers, ",") != strings.Join(local, ",") || strings.Join(asked, ",") != strings.Join(recorded, ",") {
		t.Fatalf("stacked %q after asking for %q; want %q from %q", fs.layers, asked, local, recorded)
	}
	if want := chain("template", recorded); fs.key != want {
		t.Fatalf("cache key %s, want the recorded stack's %s", fs.key, want)
	}
}
