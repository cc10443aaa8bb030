package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/warren-sandbox/warren/internal/template/layer"
)

// env is a Puller over a fresh store, all under one temp dir so tests can
// check that nothing was written anywhere else in it.
type env struct {
	root   string
	store  *layer.Store
	p      *Puller
	lines  []string // progress
	logger func(string)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	store, err := layer.NewStore(filepath.Join(root, "layers"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(filepath.Join(root, "images"), store)
	if err != nil {
		t.Fatal(err)
	}
	p.backoff = &remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 2}
	e := &env{root: root, store: store, p: p}
	e.logger = func(s string) { e.lines = append(e.lines, s) }
	return e
}

// offline makes every registry request fail the test: imported images must
// resolve without one.
func (e *env) offline(t *testing.T) {
	e.p.transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("unexpected registry request %s %s", r.Method, r.URL)
		return nil, errors.New("offline")
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startRegistry serves an in-memory registry on loopback and returns its
// host:port. wrap, if set, sits in front of it (e.g. basic auth).
func startRegistry(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func basicAuth(user, pass string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func push(t *testing.T, ref string, img v1.Image, opts ...remote.Option) {
	t.Helper()
	if err := remote.Write(mustRef(ref), img, opts...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}

// ent is a tar entry; zero fields get defaults.
type ent struct {
	name, body, link string
	typ              byte
	mode             int64
}

func file(name, body string) ent      { return ent{name: name, body: body, typ: tar.TypeReg} }
func dir(name string) ent             { return ent{name: name, typ: tar.TypeDir} }
func symlink(name, target string) ent { return ent{name: name, link: target, typ: tar.TypeSymlink} }
func hardlink(name, target string) ent {
	return ent{name: name, link: target, typ: tar.TypeLink}
}

func tarBytes(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode, ModTime: time.Unix(1700000000, 0)}
		if h.Mode == 0 {
			h.Mode = 0o644
			if e.typ == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func layerOf(t testing.TB, ents ...ent) v1.Layer {
	t.Helper()
	b := tarBytes(t, ents...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func imageOf(t testing.TB, cfg v1.Config, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", "amd64", cfg
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}

func diffIDs(t *testing.T, img v1.Image) []string {
	t.Helper()
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		d, err := l.DiffID()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Hex)
	}
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(b)
}

// leftovers lists what the store holds besides complete layers and their
// key files: scratch dirs of failed extractions must be gone.
func leftovers(t *testing.T, e *env) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(e.root, "layers"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ents {
		n := strings.TrimSuffix(d.Name(), ".key")
		if !layer.ValidKey(n) || len(n) != 20 {
			out = append(out, d.Name())
		}
	}
	return out
}

// findNamed walks root for a file called base, to prove a malicious layer
// wrote nothing outside its directory.
func findNamed(t *testing.T, root, base string) []string {
	t.Helper()
	var hits []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == base {
			hits = append(hits, p)
		}
		return nil
	})
	return hits
}
