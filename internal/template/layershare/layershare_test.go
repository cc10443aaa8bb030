package layershare

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

const (
	clusterSecret = "layershare-test-cluster-secret-0123456789"
	keyA          = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	keyB          = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// newLayerStore opens a store at <tmp>/<node>/layers, a node's layout.
func newLayerStore(t *testing.T, node string) *layer.Store {
	t.Helper()
	s, err := layer.NewStore(filepath.Join(t.TempDir(), node, "layers"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// addLayer writes files into a new layer key of s.
func addLayer(t *testing.T, s *layer.Store, key string, files map[string]string) string {
	t.Helper()
	dir, err := s.Create(t.Context(), key, func(dir string) error {
		for name, body := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(filepath.Join(dir, "opt"), 0o755); err != nil {
			return err
		}
		return os.Symlink("marker", filepath.Join(dir, "opt", "link"))
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// node is a resolver of node name over one store, on st.
func node(st store.Store, name string, s *layer.Store) *Resolver {
	return New(Options{Store: st, Stores: []*layer.Store{s}, Self: name, Cluster: clusterSigner(clusterSecret), DeadAfter: time.Minute})
}

func clusterSigner(secret string) *clusterauth.Signer {
	s, err := clusterauth.New(secret, nil)
	if err != nil {
		panic(err)
	}
	return s
}

// servePeer serves h as node name's layer endpoint, registers the node
// alive with templates, and counts the requests that reach h.
func servePeer(t *testing.T, st store.Store, name string, templates []string, h http.Handler) *atomic.Int32 {
	t.Helper()
	var hits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path+"{key}", func(w http.ResponseWriter, r *http.Request) {
		if _, err := clusterSigner(clusterSecret).Verify(r); err != nil || r.Header.Get("X-API-KEY") != "" {
			http.Error(w, "not the cluster's", http.StatusUnauthorized)
			return
		}
		hits.Add(1)
		h.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	putNode(t, st, name, srv.URL, time.Now(), templates)
	return &hits
}

func putNode(t *testing.T, st store.Store, name, url string, beat time.Time, templates []string) {
	t.Helper()
	if err := st.PutNode(t.Context(), &store.Node{Name: name, AdvertiseURL: url, HeartbeatAt: beat, Templates: templates}); err != nil {
		t.Fatal(err)
	}
}

// TestTemplateMapsPaths: layer paths resolve to this node's own store by
// key, wherever they were recorded, and paths outside the layout stay;
// another node's directory is never used, even where it exists.
func TestTemplateMapsPaths(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	local, other := newLayerStore(t, "b"), newLayerStore(t, "a")
	mine := addLayer(t, local, keyA, map[string]string{"opt/marker": "a"})
	theirs := addLayer(t, other, keyB, map[string]string{"opt/marker": "b"})
	r := node(st, "b", local)
	cacheRootfs := "/var/cache/warren/templates/base-9419fa6a05cfb99f/rootfs"
	tests := []struct {
		name    string
		layers  []string
		want    []string
		wantErr error
	}{
		{"recorded on another machine", []string{"/srv/node-a/layers/" + keyA[:20], cacheRootfs}, []string{mine, cacheRootfs}, nil},
		{"recorded in this node's store", []string{mine}, []string{mine}, nil},
		{"outside the layout", []string{cacheRootfs, "/x/" + keyB[:20]}, []string{cacheRootfs, "/x/" + keyB[:20]}, nil},
		{"another node's dir on this machine, no peer", []string{theirs, cacheRootfs}, nil, errdefs.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tpl := &store.Template{ID: "tpl", Layers: tc.layers, RootfsPath: tc.layers[len(tc.layers)-1]}
			got, err := r.Template(t.Context(), tpl)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), "template 'tpl'") ||
					!strings.Contains(err.Error(), "no node has its layers") {
					t.Fatalf("Template = %v, want %v naming the template", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Layers, ",") != strings.Join(tc.want, ",") || got.RootfsPath != tc.want[len(tc.want)-1] {
				t.Fatalf("layers %q rootfs %q, want %q", got.Layers, got.RootfsPath, tc.want)
			}
			if strings.Join(tpl.Layers, ",") != strings.Join(tc.layers, ",") {
				t.Fatal("Template changed the record it was given")
			}
		})
	}
}

// TestPullFromPeer: a missing layer comes from the peer that has it, into
// this node's store under its full key, once for many concurrent creates;
// afterwards the template counts as cached and nothing is asked again.
func TestPullFromPeer(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	peerStore, local := newLayerStore(t, "a"), newLayerStore(t, "b")
	recorded := addLayer(t, peerStore, keyA, map[string]string{"opt/marker": "layered\n", "etc/deep/x": "y"})
	hits := servePeer(t, st, "a", []string{"tpl"}, node(st, "a", peerStore))
	r := node(st, "b", local)
	cacheRootfs := t.TempDir()
	tpl := &store.Template{ID: "tpl", Layers: []string{recorded, cacheRootfs}, RootfsPath: cacheRootfs}
	if r.Cached(tpl) {
		t.Fatal("Cached before the pull")
	}
	var wg sync.WaitGroup
	results := make([]*store.Template, 8)
	errs := make([]error, 8)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], errs[i] = r.Template(t.Context(), tpl) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if results[i].Layers[0] != local.Path(keyA) || results[i].Layers[1] != cacheRootfs {
			t.Fatalf("create %d got layers %q", i, results[i].Layers)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("the peer was asked %d times, want once", n)
	}
	if !local.Has(keyA) {
		t.Fatal("the pulled layer is not in the local store under its full key")
	}
	b, err := os.ReadFile(filepath.Join(local.Path(keyA), "opt/marker"))
	if err != nil || string(b) != "layered\n" {
		t.Fatalf("pulled marker = %q, %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(local.Path(keyA), "opt/link")); err != nil || l != "marker" {
		t.Fatalf("pulled symlink = %q, %v", l, err)
	}
	if !r.Cached(tpl) {
		t.Fatal("not Cached after the pull")
	}
	if _, err := r.Template(t.Context(), tpl); err != nil || hits.Load() != 1 {
		t.Fatalf("second use: %v, %d requests", err, hits.Load())
	}
}

// TestPeersOrder: live peers only, never this node, those that list the
// template first.
func TestPeersOrder(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	now := time.Now()
	putNode(t, st, "a-without", "http://10.0.0.1:3000", now, []string{"other"})
	putNode(t, st, "b-self", "http://10.0.0.2:3000", now, []string{"tpl"})
	putNode(t, st, "c-dead", "http://10.0.0.3:3000", now.Add(-time.Hour), []string{"tpl"})
	putNode(t, st, "d-with", "http://10.0.0.4:3000", now, []string{"x", "tpl"})
	putNode(t, st, "e-no-url", "", now, []string{"tpl"})
	peers, err := node(st, "b-self", nil).peers(t.Context(), "tpl")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range peers {
		names = append(names, n.Name)
	}
	if got := strings.Join(names, ","); got != "d-with,a-without" {
		t.Fatalf("peers %s, want d-with,a-without", got)
	}
}

// rawPeer serves body as layer key, with a trailer checksum of sum
// (nil: the body's own; "": none).
func rawPeer(key string, body []byte, sum *string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(keyHeader, key)
		w.Header().Set("Trailer", sumTrailer)
		_, _ = w.Write(body)
		s := sha256.Sum256(body)
		switch {
		case sum == nil:
			w.Header().Set(sumTrailer, hex.EncodeToString(s[:]))
		case *sum != "":
			w.Header().Set(sumTrailer, *sum)
		}
	})
}

func tarOf(t *testing.T, hdrs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hdrs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			_, _ = tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPullRefusesBadLayers: a peer serving a hostile or damaged layer is
// refused, with the error a create reports, and nothing is left in the
// store (or outside it).
func TestPullRefusesBadLayers(t *testing.T) {
	t.Parallel()
	good := tarOf(t, &tar.Header{Name: "opt/marker", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3})
	wrong, none := strings.Repeat("0", 64), ""
	tests := []struct {
		name string
		peer func(t *testing.T) http.Handler
	}{
		{"path escapes the layer", func(t *testing.T) http.Handler {
			return rawPeer(keyA, tarOf(t, &tar.Header{Name: "../escaped", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3}), nil)
		}},
		{"device node", func(t *testing.T) http.Handler {
			return rawPeer(keyA, tarOf(t, &tar.Header{Name: "dev/mem", Typeflag: tar.TypeChar, Mode: 0o600, Devmajor: 1, Devminor: 1}), nil)
		}},
		{"symlink then write through it", func(t *testing.T) http.Handler {
			return rawPeer(keyA, tarOf(t, &tar.Header{Name: "etc", Typeflag: tar.TypeSymlink, Linkname: "/etc"},
				&tar.Header{Name: "etc/escaped", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3}), nil)
		}},
		{"another layer's key", func(*testing.T) http.Handler { return rawPeer(keyB, good, nil) }},
		{"invalid key", func(*testing.T) http.Handler { return rawPeer(keyA[:20]+"/../x", good, nil) }},
		{"wrong checksum", func(*testing.T) http.Handler { return rawPeer(keyA, good, &wrong) }},
		{"cut short", func(*testing.T) http.Handler { return rawPeer(keyA, good[:len(good)/2], &none) }},
		{"no checksum", func(*testing.T) http.Handler { return rawPeer(keyA, good, &none) }},
		{"not found", func(*testing.T) http.Handler { return http.NotFoundHandler() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := sqlitetest.Open(t)
			servePeer(t, st, "a", []string{"tpl"}, tc.peer(t))
			local := newLayerStore(t, "b")
			root := filepath.Dir(local.Path(keyA))
			tpl := &store.Template{ID: "tpl", Layers: []string{"/srv/a/layers/" + keyA[:20]}, RootfsPath: "/srv/a/layers/" + keyA[:20]}
			_, err := node(st, "b", local).Template(t.Context(), tpl)
			if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "template 'tpl'") {
				t.Fatalf("Template = %v, want ErrUnavailable naming the template", err)
			}
			if ents, _ := os.ReadDir(root); len(ents) != 0 {
				t.Fatalf("the store holds %v after a refused pull", ents)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(root), "escaped")); err == nil {
				t.Fatal("a file was written outside the store")
			}
		})
	}
}

// TestServeUnknownLayer: a layer this node lacks is 404 in E2B's shape.
func TestServeUnknownLayer(t *testing.T) {
	t.Parallel()
	r := node(sqlitetest.Open(t), "a", newLayerStore(t, "a"))
	mux := http.NewServeMux()
	mux.Handle("GET "+Path+"{key}", r)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path+keyA[:20], nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"code":404,"error_code":"not_found"`) {
		t.Fatalf("GET unknown layer = %d %s", rec.Code, rec.Body)
	}
}

// TestCached: a template is cached when every layer is in this node's
// stores (by key) and every other path exists.
func TestCached(t *testing.T) {
	t.Parallel()
	local, other := newLayerStore(t, "b"), newLayerStore(t, "a")
	mine := addLayer(t, local, keyA, map[string]string{"f": "x"})
	theirs := addLayer(t, other, keyB, map[string]string{"f": "y"})
	r := node(sqlitetest.Open(t), "b", local)
	dir := t.TempDir()
	tests := []struct {
		name string
		tpl  store.Template
		want bool
	}{
		{"own layer and cache dir", store.Template{Layers: []string{"/elsewhere/layers/" + keyA[:20], dir}, RootfsPath: dir}, true},
		{"rootfs only", store.Template{RootfsPath: dir}, true},
		{"another node's layer on this machine", store.Template{Layers: []string{theirs, mine}, RootfsPath: mine}, false},
		{"missing cache dir", store.Template{RootfsPath: filepath.Join(dir, "gone")}, false},
		{"no build", store.Template{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.Cached(&tc.tpl); got != tc.want {
				t.Fatalf("Cached = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPullGivesUpWithItsContext: a create whose context ends stops
// waiting for a slow peer.
func TestPullGivesUpWithItsContext(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	release := make(chan struct{})
	servePeer(t, st, "a", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release) }) // before the server closes
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	tpl := &store.Template{ID: "tpl", RootfsPath: "/srv/a/layers/" + keyA[:20]}
	if _, err := node(st, "b", newLayerStore(t, "b")).Template(ctx, tpl); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Template = %v, want the context's deadline", err)
	}
}

// TestPullNeedsTheClusterSecret: a node with another cluster secret gets
// nothing from a peer, and publishes nothing.
func TestPullNeedsTheClusterSecret(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	peerStore, local := newLayerStore(t, "a"), newLayerStore(t, "b")
	recorded := addLayer(t, peerStore, keyA, map[string]string{"opt/marker": "layered\n"})
	hits := servePeer(t, st, "a", []string{"tpl"}, node(st, "a", peerStore))
	r := New(Options{Store: st, Stores: []*layer.Store{local}, Self: "b",
		Cluster: clusterSigner(strings.Repeat("o", clusterauth.MinSecretLen)), DeadAfter: time.Minute})
	_, err := r.Template(t.Context(), &store.Template{ID: "tpl", Layers: []string{recorded}})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("pull with another secret: %v, want the peer's 401", err)
	}
	if hits.Load() != 0 || local.Has(keyA) {
		t.Fatalf("the peer served %d requests; layer published: %v", hits.Load(), local.Has(keyA))
	}
}
