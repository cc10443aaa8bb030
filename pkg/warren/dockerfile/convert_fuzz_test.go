package dockerfile

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// outsideSecret is the content of a file beside the fuzzed build context:
// nothing a Dockerfile or a COPY source says may bring it into an upload.
const outsideSecret = "OUTSIDE-THE-CONTEXT"

// fuzzContext lays out sampleTree in base/ctx with a secret in base and
// returns the context directory.
func fuzzContext(f *testing.F) string {
	base := f.TempDir()
	dir := filepath.Join(base, "ctx")
	writeTreeAt(f, dir, sampleTree())
	if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte(outsideSecret), 0o644); err != nil {
		f.Fatal(err)
	}
	return dir
}

// noNetwork makes ADD's downloads fail at once: fuzzed URLs must never
// leave the machine. Fuzz targets run after the package's tests, so
// nothing else sees the change.
func noNetwork(f *testing.F) {
	old := http.DefaultClient.Transport
	http.DefaultClient.Transport = refuseAll{}
	f.Cleanup(func() { http.DefaultClient.Transport = old })
}

type refuseAll struct{}

func (refuseAll) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network while fuzzing")
}

// within runs fn and crashes the test binary if it takes more than 20 s:
// the fuzzer then keeps the input that hung.
func within(what string, fn func()) {
	timer := time.AfterFunc(20*time.Second, func() { panic(what + " did not finish within 20s") })
	defer timer.Stop()
	fn()
}

// checkSource holds what a COPY source selects to the context: listed
// paths stay inside it, and the tar the SDK would upload names nothing
// outside and carries no byte of the file beside it.
func checkSource(t *testing.T, bctx *Context, src string) {
	t.Helper()
	files, err := bctx.Files(src)
	if err != nil {
		return
	}
	for _, p := range files {
		if path.IsAbs(p) || p == ".." || strings.HasPrefix(path.Clean(p), "../") {
			t.Fatalf("%q selects %q, outside the context", src, p)
		}
		if _, err := os.Lstat(filepath.Join(bctx.Dir(), p)); err != nil {
			t.Fatalf("%q selects %q, which is not in the context: %v", src, p, err)
		}
	}
	var buf bytes.Buffer
	if err := bctx.WriteTar(&buf, src); err != nil {
		return
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatalf("WriteTar(%q) wrote no gzip: %v", src, err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("WriteTar(%q) wrote a broken tar: %v", src, err)
		}
		if n := path.Clean(hdr.Name); path.IsAbs(n) || n == ".." || strings.HasPrefix(n, "../") {
			t.Fatalf("WriteTar(%q) names %q", src, hdr.Name)
		}
		body, _ := io.ReadAll(tr)
		if bytes.Contains(body, []byte(outsideSecret)) {
			t.Fatalf("WriteTar(%q) uploads the file outside the context as %q", src, hdr.Name)
		}
	}
}

// FuzzContext selects files with arbitrary COPY sources under arbitrary
// .dockerignore files.
func FuzzContext(f *testing.F) {
	dir := fuzzContext(f)
	for _, s := range [][2]string{
		{".", "*.log\n**/*.tmp\nsecret\n"},
		{"src/**/*.json", "!src/sub/more/a.json\nsrc/sub/more\n"},
		{"{a,src}/*", ""},
		{"{..,src}/secret.txt", ""},
		{"link/../../secret.txt", ""},
		{"weird/[brackets].txt", "[\n"},
		{"src/\\{braces\\}.txt", "**"},
		{strings.Repeat("{a,b}", 12), ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, src, ignore string) {
		if err := os.WriteFile(filepath.Join(dir, ".dockerignore"), []byte(ignore), 0o644); err != nil {
			t.Fatal(err)
		}
		bctx, err := NewContext(dir)
		if err != nil {
			return // a malformed pattern is refused up front
		}
		within("selecting "+src, func() { checkSource(t, bctx, src) })
	})
}

// FuzzConvert converts arbitrary Dockerfiles against a sample context. It
// must end with a spec or an error, and every COPY of the spec must stay
// within the context.
func FuzzConvert(f *testing.F) {
	dir := fuzzContext(f)
	noNetwork(f)
	for _, s := range []string{
		"FROM ubuntu:22.04\nRUN echo hi\nCOPY . /app\n",
		"ARG V=1\nFROM alpine:${V} AS build\nWORKDIR /w\nCOPY --chmod=755 exec.sh ./\nRUN ./exec.sh\nFROM build\nCOPY --from=build /w /out\nENV A=b\nUSER nobody\nCMD [\"sh\"]\n",
		"FROM scratch\nADD a.txt {..,src}/x /d/\n",
		"FROM x\nCOPY {..,src}/secret.txt /d\n",
		"FROM x\nADD http://127.0.0.1:1/f /f\n",
		"# escape=`\nFROM x\nRUN a `\n b\n",
		"FROM x\nCOPY <<EOF /f\nhello\nEOF\n",
		"FROM x\nHEALTHCHECK CMD true\nEXPOSE 80/tcp\nLABEL a=b\nVOLUME /v\nSTOPSIGNAL 9\nONBUILD RUN x\n",
		"FROM x AS a\nFROM a AS b\nFROM b\nCOPY --from=a / /\n",
		"FROM\n",
		"RUN x\n",
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte("FROM x AS one\nRUN a\nFROM y AS two\n"), "one")

	f.Fuzz(func(t *testing.T, dockerfile []byte, target string) {
		bctx, err := NewContext(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer bctx.Close()
		within("Convert", func() {
			req, _, err := Convert(dockerfile, Options{Context: bctx, Target: target})
			if err != nil {
				if err.Error() == "" {
					t.Fatal("an error without a message")
				}
				return
			}
			if req == nil {
				t.Fatal("no spec and no error")
			}
			steps := req.Steps
			for _, st := range req.Stages {
				steps = append(steps, st.Steps...)
			}
			for _, st := range steps {
				if st.FilesHash != "" && len(st.Args) > 0 {
					checkSource(t, bctx, st.Args[0])
				}
			}
		})
	})
}
