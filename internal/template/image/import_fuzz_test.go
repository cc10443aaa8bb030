package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// FuzzImport feeds arbitrary `docker save` tarballs (plain or gzipped) and,
// with asLayout, OCI layout directories (the fuzzed bytes untarred) to
// Import. A broken archive must fail with a classified error and leave
// nothing behind: no record, no layer, no scratch file, no request to a
// registry, no write outside the puller's directories.
func FuzzImport(f *testing.F) {
	img := imageOf(f, v1.Config{Cmd: []string{"app"}},
		layerOf(f, dir("etc"), file("etc/app", "a"), symlink("bin", "usr/bin")),
		layerOf(f, file(".wh.bin", ""), file("etc/app", "b"), hardlink("etc/app2", "etc/app")))
	var save bytes.Buffer
	if err := tarball.MultiRefWrite(map[name.Reference]v1.Image{mustRef("fuzz.invalid/app:1"): img}, &save); err != nil {
		f.Fatal(err)
	}
	f.Add(save.Bytes(), false)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(save.Bytes())
	_ = zw.Close()
	f.Add(gz.Bytes(), false)
	f.Add(tarDir(f, ociLayout(f, img)), true)
	f.Add([]byte(`[{"Config":"c.json","RepoTags":["x:1"],"Layers":["../../l.tar"]}]`), false)
	f.Add([]byte("not a tar"), false)
	f.Add([]byte{0x1f, 0x8b, 0, 0}, false)

	f.Fuzz(func(t *testing.T, archive []byte, asLayout bool) {
		e := newEnv(t)
		e.offline(t)
		e.p.LayerLimit = 1 << 20
		canary := filepath.Join(e.root, "canary")
		if err := os.WriteFile(canary, []byte("canary"), 0o644); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(t.TempDir(), "save.tar")
		if asLayout {
			src = filepath.Dir(src)
			untarPlain(archive, src)
		} else if err := os.WriteFile(src, archive, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		refs, err := e.p.Import(ctx, "fuzz-team", src, nil)
		if ctx.Err() != nil {
			t.Fatalf("Import did not finish within 20s: %v", err)
		}
		checkImport(t, e, refs, err)
		if b, rerr := os.ReadFile(canary); rerr != nil || string(b) != "canary" {
			t.Fatalf("a file beside the puller's directories changed: %q, %v", b, rerr)
		}
	})
}

// checkImport: a failure is classified and leaves nothing; a success
// lists every ref it returned, each with its layers in the store.
func checkImport(t *testing.T, e *env, refs []string, err error) {
	t.Helper()
	list, lerr := e.p.List()
	if lerr != nil {
		t.Fatalf("List after Import: %v", lerr)
	}
	if left := leftovers(t, e); len(left) > 0 {
		t.Fatalf("the layer store holds %v after Import (err %v)", left, err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(e.root, "images", ".tmp-*")); len(tmp) > 0 {
		t.Fatalf("scratch files left: %v", tmp)
	}
	if err != nil {
		if !errdefs.IsInvalidArgument(err) && !errors.Is(err, errdefs.ErrNoSpace) {
			t.Fatalf("unclassified error for a broken archive: %v", err)
		}
		if len(list) > 0 {
			t.Fatalf("a failed import recorded %v", list)
		}
		return
	}
	if len(refs) == 0 {
		t.Fatal("Import succeeded with no ref")
	}
	for _, ref := range refs {
		i := slices.IndexFunc(list, func(im ImportedImage) bool { return im.Ref == ref })
		if i < 0 {
			t.Fatalf("ref %s returned but not listed", ref)
		}
		for _, k := range list[i].Layers {
			if !e.store.Has(k) {
				t.Fatalf("image %s names layer %s the store lacks", ref, k)
			}
		}
	}
}

// ociLayout writes img as an OCI layout directory.
func ociLayout(f *testing.F, img v1.Image) string {
	dir := f.TempDir()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		f.Fatal(err)
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{annotationRefName: "fuzz.invalid/app:1"})); err != nil {
		f.Fatal(err)
	}
	return dir
}

// tarDir packs the regular files and directories under dir.
func tarDir(f *testing.F, dir string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: rel + "/", Typeflag: tar.TypeDir, Mode: 0o755})
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}

// untarPlain writes the regular files and directories of data under dir,
// skipping any name that is not a plain relative path: it only lays out
// the layout directory the fuzzer described, it is not under test.
func untarPlain(data []byte, dir string) {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if err != nil {
			return
		}
		n := path.Clean(hdr.Name)
		if path.IsAbs(n) || n == "." || n == ".." || strings.HasPrefix(n, "../") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(n))
		switch hdr.Typeflag {
		case tar.TypeDir:
			_ = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			b, _ := io.ReadAll(io.LimitReader(tr, 1<<20))
			_ = os.WriteFile(p, b, 0o644)
		}
	}
}
