package dockerfile

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFiles(t *testing.T) {
	t.Parallel()
	bctx, err := NewContext(writeTree(t, sampleTree()))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		src  string
		want []string
	}{
		{"a.txt", []string{"a.txt"}},
		{"./a.txt", []string{"a.txt"}},
		{"src", []string{"src", "src/main.go", "src/sub", "src/sub/.env", "src/sub/deep.txt", "src/sub/more", "src/sub/more/a.json", "src/sub/more/z.json", "src/x.log", "src/{braces}.txt"}},
		{"src/sub/", []string{"src/sub", "src/sub/.env", "src/sub/deep.txt", "src/sub/more", "src/sub/more/a.json", "src/sub/more/z.json"}},
		{"a.txt/", nil}, // a trailing slash matches directories only
		{"*.txt", []string{"a.txt", "my file.txt", "ü.txt"}},
		{"?.txt", []string{"a.txt", "ü.txt"}},
		{"[ab]*", []string{"a", "a-b", "a-b/c.txt", "a.txt", "a/b.txt"}},
		{"**/*.json", []string{"src/sub/more/a.json", "src/sub/more/z.json"}},
		{"src/**/.env", []string{"src/sub/.env"}},
		{"{a.txt,exec.sh,nope}", []string{"a.txt", "exec.sh"}},
		{"src/{main.go,sub/{deep.txt,.env}}", []string{"src/main.go", "src/sub/.env", "src/sub/deep.txt"}},
		{"src/{braces}.txt", []string{"src/{braces}.txt"}},
		{`weird/\[brackets\].txt`, []string{"weird/[brackets].txt"}},
		{"link", []string{"link"}},                 // a link is not followed
		{"link/main.go", []string{"link/main.go"}}, // but paths through it resolve
		{"dangling", []string{"dangling"}},
		{"tools", []string{"tools", "tools/bin", "tools/bin/run", "tools/readonly.txt"}},
		{"empty", []string{"empty"}},
		{"nope", nil},
		{"root.log", nil},      // *.log
		{"secret", nil},        // secret
		{"src/cache.tmp", nil}, // **/*.tmp
		{"src/../a.txt", []string{"a.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			got, err := bctx.Files(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Files(%q) = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

func TestFilesRoot(t *testing.T) {
	t.Parallel()
	bctx, err := NewContext(writeTree(t, sampleTree()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := bctx.Files(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".", ".dockerignore", ".hidden", "a-b/c.txt", "link", "src/x.log", "weird/[brackets].txt"} {
		if !slices.Contains(got, want) {
			t.Errorf("Files(.) lacks %s: %q", want, got)
		}
	}
	for _, unwanted := range []string{"root.log", "secret", "secret/key", "secret/nested/k2", "src/cache.tmp", "link/main.go"} {
		if slices.Contains(got, unwanted) {
			t.Errorf("Files(.) has %s", unwanted)
		}
	}
	if got[0] != "." || !slices.IsSorted(got) {
		t.Errorf("Files(.) is not sorted with the root first: %q", got)
	}
}

// The .dockerignore follows Docker's rules, which the SDK's node-glob
// ignore option does not: a bare directory name hides its contents, and
// "!" brings paths back.
func TestDockerignoreDockerRules(t *testing.T) {
	t.Parallel()
	bctx, err := NewContext(writeTree(t, map[string]fsEntry{
		".dockerignore":             {Content: "node_modules\n/build\n*.md\n!README.md\n"},
		"node_modules/pkg/index.js": {Content: "x"},
		"build/out":                 {Content: "x"},
		"sub/build/kept":            {Content: "x"},
		"NOTES.md":                  {Content: "x"},
		"README.md":                 {Content: "x"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := bctx.Files(".")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".", ".dockerignore", "README.md", "sub", "sub/build", "sub/build/kept"}
	if !slices.Equal(got, want) {
		t.Errorf("Files(.) = %q, want %q", got, want)
	}
}

func TestSourceValidation(t *testing.T) {
	t.Parallel()
	bctx, err := NewContext(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ src, want string }{
		{"/etc/passwd", "absolute paths are not allowed"},
		{"../x", "escapes the build context"},
		{"..", "escapes the build context"},
		{"a/../../x", "escapes the build context"},
		{"./a/../..", "escapes the build context"},
		// Found by FuzzContext: only the expanded alternative climbs out,
		// and unbounded braces took exponential time.
		{"{..,a}/x", "escapes the build context"},
		{"a/{b,../../..}", "escapes the build context"},
		{strings.Repeat("{a,b}", 30), "more than 1024 patterns"},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			for name, call := range map[string]func() error{
				"Files": func() error { _, err := bctx.Files(tc.src); return err },
				"Hash":  func() error { _, err := bctx.Hash(tc.src, "/x"); return err },
				"Tar":   func() error { return bctx.WriteTar(io.Discard, tc.src) },
			} {
				if err := call(); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s(%q) error %v, want %q", name, tc.src, err, tc.want)
				}
			}
		})
	}
}

func TestNewContextErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	badIgnore := writeTree(t, map[string]fsEntry{".dockerignore": {Content: "[\n"}})
	cases := []struct{ name, dir, want string }{
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"file", file, "is not a directory"},
		{"bad pattern", badIgnore, "parsing .dockerignore"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := NewContext(tc.dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewContext error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestHashNoFiles(t *testing.T) {
	t.Parallel()
	bctx, err := NewContext(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bctx.Hash("*.go", "/x"); err == nil || !strings.Contains(err.Error(), `no files found for "*.go"`) {
		t.Errorf("Hash error %v", err)
	}
	if err := bctx.WriteTar(io.Discard, "*.go"); err == nil {
		t.Error("WriteTar of nothing succeeded")
	}
}

func TestHashDependsOnContent(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]fsEntry{"a": {Content: "1"}})
	bctx, err := NewContext(dir)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := bctx.Hash("a", "/a")
	h2, _ := bctx.Hash("a", "/b")
	os.WriteFile(filepath.Join(dir, "a"), []byte("2"), 0o644)
	h3, _ := bctx.Hash("a", "/a")
	os.Chmod(filepath.Join(dir, "a"), 0o755)
	h4, _ := bctx.Hash("a", "/a")
	if len(slices.Compact([]string{h1, h2, h3, h4})) != 4 {
		t.Errorf("hashes should all differ: %s %s %s %s", h1, h2, h3, h4)
	}
}

// ADD of a tarball uploads the tarball itself; the server unpacks it.
func TestWriteTarOfTarball(t *testing.T) {
	t.Parallel()
	inner := gzipOf(tarOf("f", "1"))
	bctx, err := NewContext(writeTree(t, map[string]fsEntry{"pkg.tar.gz": {Content: inner}}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bctx.WriteTar(&buf, "pkg.tar.gz"); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(tr)
	if h.Name != "pkg.tar.gz" || string(body) != inner {
		t.Errorf("entry %s with %d bytes, want pkg.tar.gz with the archive", h.Name, len(body))
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("more than one entry: %v", err)
	}
}
