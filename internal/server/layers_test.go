package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// TestCachedTemplates: a node lists a template as cached only when every
// layer is in its own stores by key, wherever the store says the layer
// was built; a layer whose recorded directory exists on this machine but
// is another node's does not count. The one-machine server (no resolver)
// keeps its old test: the rootfs directory exists.
func TestCachedTemplates(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	key := strings.Repeat("a", 64)
	otherKey := strings.Repeat("b", 64)
	other, err := layer.NewStore(filepath.Join(t.TempDir(), "node-a", "layers"))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := other.Create(ctx, otherKey, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	st := sqlitetest.Open(t)
	for _, tpl := range []*store.Template{
		{ID: "builtin", RootfsPath: cache},
		{ID: "pulled", Layers: []string{"/srv/node-a/layers/" + key[:20], cache}, RootfsPath: cache},
		{ID: "theirs", Layers: []string{theirs, cache}, RootfsPath: cache},
		{ID: "theirs-only", RootfsPath: theirs},
		{ID: "unbuilt"},
	} {
		if err := st.PutTemplate(ctx, tpl); err != nil {
			t.Fatal(err)
		}
	}
	node := validConfig()
	asNode(&node)
	node.DataDir = t.TempDir()
	auth, err := node.clusterSigner()
	if err != nil {
		t.Fatal(err)
	}
	nl, err := openLayers(&node, st, auth)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nl.build.Create(ctx, key, func(dir string) error { return os.WriteFile(filepath.Join(dir, "f"), nil, 0o644) }); err != nil {
		t.Fatal(err)
	}
	one := validConfig()
	one.DataDir = t.TempDir()
	single, err := openLayers(&one, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		layers *nodeLayers
		want   []string
	}{
		{"node: by key in its own stores", nl, []string{"builtin", "pulled"}},
		{"one machine: the rootfs exists", single, []string{"builtin", "pulled", "theirs", "theirs-only"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cachedTemplates(ctx, st, tc.layers.cached())
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("cached %q, want %q", got, tc.want)
			}
		})
	}
	if single.localTemplate() != nil || single.handler() != nil {
		t.Error("the one-machine server maps or serves layers")
	}
}
