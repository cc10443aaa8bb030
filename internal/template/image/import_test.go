package image

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

func mustRef(s string) name.Reference {
	r, err := name.ParseReference(s)
	if err != nil {
		panic(err)
	}
	return r
}

func writeDockerTarball(t *testing.T, path string, gz bool, imgs map[string]v1.Image) {
	t.Helper()
	refs := make(map[name.Reference]v1.Image)
	for r, img := range imgs {
		refs[mustRef(r)] = img
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w io.Writer = f
	if gz {
		zw := gzip.NewWriter(f)
		defer zw.Close()
		w = zw
	}
	if err := tarball.MultiRefWrite(refs, w); err != nil {
		t.Fatal(err)
	}
}

func TestImportDockerTarball(t *testing.T) {
	app := imageOf(t, v1.Config{Cmd: []string{"app"}}, layerOf(t, file("base", "b")), layerOf(t, file("app", "a")))
	tool := imageOf(t, v1.Config{Cmd: []string{"tool"}}, layerOf(t, file("tool", "t")))
	for _, gz := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "gzip"}[gz], func(t *testing.T) {
			e := newEnv(t)
			e.offline(t)
			path := filepath.Join(t.TempDir(), "save.tar")
			writeDockerTarball(t, path, gz, map[string]v1.Image{
				"example.invalid/app:1": app, "example.invalid/app:latest": app, "tool:2": tool,
			})
			refs, err := e.p.Import(ctx, testTeam, path, e.logger)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(refs)
			want := []string{"example.invalid/app:1", "example.invalid/app:latest", "index.docker.io/library/tool:2"}
			if !slices.Equal(refs, want) {
				t.Errorf("refs = %v, want %v", refs, want)
			}
			img, err := e.p.Resolve(ctx, testTeam, "example.invalid/app:1", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(img.Layers) != 2 || readFile(t, filepath.Join(img.Layers[0], "app")) != "a" ||
				readFile(t, filepath.Join(img.Layers[1], "base")) != "b" || !slices.Equal(img.Config.Cmd, []string{"app"}) {
				t.Errorf("app image = %+v", img)
			}
			if id, _ := app.ConfigName(); img.Digest != id.String() {
				t.Errorf("digest = %s, want the image ID %s", img.Digest, id)
			}
			if _, err := e.p.Resolve(ctx, testTeam, "tool:2", nil, nil); err != nil { // short form, normalised
				t.Error(err)
			}
			list, err := e.p.List()
			if err != nil || len(list) != 3 || list[0].Ref != want[0] || list[0].Size <= 0 || list[0].Imported.IsZero() {
				t.Errorf("List = %+v, %v", list, err)
			}
			if left, _ := filepath.Glob(filepath.Join(e.root, "images", ".tmp-*")); len(left) != 0 {
				t.Errorf("scratch files left: %v", left)
			}
		})
	}
}

func TestImportOCILayout(t *testing.T) {
	named := imageOf(t, v1.Config{Env: []string{"X=1"}}, layerOf(t, file("named", "n")))
	anon := imageOf(t, v1.Config{}, layerOf(t, file("anon", "a")))
	amd := imageOf(t, v1.Config{}, layerOf(t, file("arch", "amd64")))
	arm := imageOf(t, v1.Config{}, layerOf(t, file("arch", "arm64")))
	multi := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})

	dir := t.TempDir()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	ann := func(k, v string) layout.Option { return layout.WithAnnotations(map[string]string{k: v}) }
	if err := lp.AppendImage(named, ann(annotationRefName, "example.invalid/oci:1")); err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(anon); err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendIndex(multi, ann(annotationContainerdName, "docker.io/library/multi:1")); err != nil {
		t.Fatal(err)
	}

	e := newEnv(t)
	e.offline(t)
	refs, err := e.p.Import(ctx, testTeam, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	anonDigest, _ := anon.Digest()
	namedDigest, _ := named.Digest()
	want := []string{"example.invalid/oci:1", anonDigest.String(), "index.docker.io/library/multi:1"}
	if !slices.Equal(refs, want) {
		t.Errorf("refs = %v, want %v", refs, want)
	}
	tests := []struct{ ref, file, body string }{
		{"example.invalid/oci:1", "named", "n"},
		{"example.invalid/oci@" + namedDigest.String(), "named", "n"},
		{anonDigest.String(), "anon", "a"},
		{"multi:1", "arch", "amd64"},
	}
	for _, tc := range tests {
		img, err := e.p.Resolve(ctx, testTeam, tc.ref, nil, nil)
		if err != nil {
			t.Errorf("Resolve(%s): %v", tc.ref, err)
			continue
		}
		if got := readFile(t, filepath.Join(img.Layers[0], tc.file)); got != tc.body {
			t.Errorf("Resolve(%s): %s = %q, want %q", tc.ref, tc.file, got, tc.body)
		}
	}
	if img, _ := e.p.Resolve(ctx, testTeam, "example.invalid/oci:1", nil, nil); img == nil || !slices.Equal(img.Config.Env, []string{"X=1"}) {
		t.Errorf("config not kept: %+v", img)
	}
}

func TestImportedLayerGone(t *testing.T) {
	e := newEnv(t)
	e.offline(t)
	path := filepath.Join(t.TempDir(), "save.tar")
	writeDockerTarball(t, path, false, map[string]v1.Image{"example.invalid/x:1": imageOf(t, v1.Config{}, layerOf(t, file("f", "x")))})
	if _, err := e.p.Import(ctx, testTeam, path, nil); err != nil {
		t.Fatal(err)
	}
	keys, _ := e.store.List()
	for _, k := range keys {
		e.store.Remove(k)
	}
	if _, err := e.p.Resolve(ctx, testTeam, "example.invalid/x:1", nil, nil); !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), "import it again") {
		t.Errorf("err = %v", err)
	}
}

func TestImportErrors(t *testing.T) {
	tmp := t.TempDir()
	garbage := filepath.Join(tmp, "garbage.tar")
	os.WriteFile(garbage, []byte(strings.Repeat("not a tar", 100)), 0o644)
	emptyDir := filepath.Join(tmp, "empty")
	os.Mkdir(emptyDir, 0o755)
	evil := filepath.Join(tmp, "evil.tar")
	writeDockerTarball(t, evil, false, map[string]v1.Image{
		"example.invalid/evil:1": imageOf(t, v1.Config{}, layerOf(t, file("../../pwned", "x"))),
	})
	big := filepath.Join(tmp, "big.tar")
	writeDockerTarball(t, big, false, map[string]v1.Image{
		"example.invalid/big:1": imageOf(t, v1.Config{}, layerOf(t, file("big", strings.Repeat("x", 4096)))),
	})
	// A layer whose gzip stream breaks part-way (found by FuzzImport: it
	// was an unclassified error, a 500 for the user's own broken file).
	corrupt := filepath.Join(tmp, "corrupt.tar")
	writeDockerTarball(t, corrupt, false, map[string]v1.Image{
		"example.invalid/corrupt:1": imageOf(t, v1.Config{}, layerOf(t, file("f", strings.Repeat("data ", 2000)))),
	})
	b, _ := os.ReadFile(corrupt)
	at := bytes.Index(b, []byte{0x1f, 0x8b, 0x08})
	if at < 0 {
		t.Fatal("the tarball holds no gzipped layer")
	}
	copy(b[at+12:], bytes.Repeat([]byte{0xff}, 16))
	os.WriteFile(corrupt, b, 0o644)
	// A gzipped archive whose deflate stream is garbage (also FuzzImport's).
	badGzip := filepath.Join(tmp, "bad.tar.gz")
	os.WriteFile(badGzip, append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, bytes.Repeat([]byte{0xff}, 64)...), 0o644)
	// A tarball whose image config is cut-off JSON (also FuzzImport's).
	badJSON := filepath.Join(tmp, "badjson.tar")
	os.WriteFile(badJSON, tarBytes(t, file("manifest.json", `[{"Config":"c.json","RepoTags":["x:1"],"Layers":[]}]`), file("c.json", `{`)), 0o644)
	// An OCI layout without one of its layer blobs (also FuzzImport's).
	noBlob := filepath.Join(tmp, "noblob")
	lp, err := layout.Write(noBlob, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	img := imageOf(t, v1.Config{}, layerOf(t, file("f", "x")))
	if err := lp.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	ls, _ := img.Layers()
	d, _ := ls[0].Digest()
	os.Remove(filepath.Join(noBlob, "blobs", d.Algorithm, d.Hex))
	tests := []struct {
		name, path string
		want       error
	}{
		{"missing", filepath.Join(tmp, "nope.tar"), errdefs.ErrNotFound},
		{"layout without a layer blob", noBlob, errdefs.ErrInvalidArgument},
		{"broken config JSON", badJSON, errdefs.ErrInvalidArgument},
		{"corrupt gzip", badGzip, errdefs.ErrInvalidArgument},
		{"corrupt compressed layer", corrupt, errdefs.ErrInvalidArgument},
		{"not a tarball", garbage, errdefs.ErrInvalidArgument},
		{"not a layout", emptyDir, errdefs.ErrInvalidArgument},
		{"malicious layer", evil, errdefs.ErrInvalidArgument},
		{"over the layer limit", big, errdefs.ErrNoSpace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.p.LayerLimit = 1000
			if _, err := e.p.Import(ctx, testTeam, tc.path, nil); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if list, _ := e.p.List(); len(list) != 0 {
				t.Errorf("index holds %v", list)
			}
			if keys, _ := e.store.List(); len(keys) != 0 || len(leftovers(t, e)) != 0 || len(findNamed(t, e.root, "pwned")) != 0 {
				t.Errorf("store holds %v %v", keys, leftovers(t, e))
			}
		})
	}
}

func TestImportUntaggedTarball(t *testing.T) {
	img := imageOf(t, v1.Config{}, layerOf(t, file("f", "untagged")))
	d, _ := img.Digest()
	path := filepath.Join(t.TempDir(), "save.tar")
	writeDockerTarball(t, path, false, map[string]v1.Image{"example.invalid/x@" + d.String(): img})
	e := newEnv(t)
	e.offline(t)
	refs, err := e.p.Import(ctx, testTeam, path, nil)
	id, _ := img.ConfigName()
	if err != nil || len(refs) != 1 || refs[0] != id.String() {
		t.Fatalf("Import = %v, %v; want [%s]", refs, err, id)
	}
	got, err := e.p.Resolve(ctx, testTeam, id.String(), nil, nil)
	if err != nil || readFile(t, filepath.Join(got.Layers[0], "f")) != "untagged" {
		t.Errorf("Resolve(%s) = %+v, %v", id, got, err)
	}
}
