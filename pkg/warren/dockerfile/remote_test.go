package dockerfile

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
)

// fileServer serves name with body on loopback, with a Last-Modified date.
func fileServer(t *testing.T, files map[string]string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Last-Modified", "Tue, 10 Nov 2020 08:00:00 GMT")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// tarEntries reads a gzip tar into name -> header and content.
func tarEntries(t *testing.T, data []byte) map[string]*tar.Header {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h
	}
}

// TestAddURL: ADD of a URL downloads on the CLI's side into the context and
// becomes a COPY of that file, never unpacked, mode 0600, dated by
// Last-Modified, checked against --checksum; the download goes on Close.
func TestAddURL(t *testing.T) {
	tarball := string(tarOf("f", "1"))
	base := fileServer(t, map[string]string{"/tool.tar": tarball, "/notes.txt": "hello"})
	sum := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte("hello")))
	df := fmt.Sprintf("FROM debian\nADD %s/tool.tar /opt/\nADD --checksum=%s %s/notes.txt local.txt /srv/\n", base, sum, base)
	bctx, err := NewContext(writeTree(t, map[string]fsEntry{"local.txt": {Content: "l"}}))
	if err != nil {
		t.Fatal(err)
	}
	req, _, err := Convert([]byte(df), Options{Context: bctx})
	if err != nil {
		t.Fatal(err)
	}
	var copies []wire.Step
	for _, s := range req.Steps {
		if s.Type == wire.StepCopy {
			copies = append(copies, s)
		}
	}
	if len(copies) != 3 || copies[0].Args[0] != remotePrefix+"/1/tool.tar" || copies[0].Extract ||
		copies[1].Args[0] != remotePrefix+"/2/notes.txt" || copies[1].Args[1] != "/srv/" || copies[2].Args[0] != "local.txt" {
		t.Fatalf("COPY steps: %+v", copies)
	}
	var buf bytes.Buffer
	if err := bctx.WriteTar(&buf, copies[1].Args[0]); err != nil {
		t.Fatal(err)
	}
	h := tarEntries(t, buf.Bytes())[remotePrefix+"/2/notes.txt"]
	if h == nil || h.Size != 5 || h.Mode&0o777 != 0o600 || !h.ModTime.Equal(time.Date(2020, 11, 10, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("downloaded file in the tar: %+v", h)
	}
	dir := bctx.remote
	if err := bctx.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("downloads left in %s after Close: %v", dir, err)
	}
}

func TestAddURLErrors(t *testing.T) {
	base := fileServer(t, map[string]string{"/a.txt": "a"})
	tests := []struct{ name, add, want string }{
		{"missing file", "ADD " + base + "/nothing.txt /x", "404 Not Found"},
		{"wrong checksum", "ADD --checksum=sha256:" + strings.Repeat("0", 64) + " " + base + "/a.txt /x", "does not match --checksum"},
		{"bad checksum", "ADD --checksum=md5:abc " + base + "/a.txt /x", "only sha256"},
		{"no file name", "ADD " + base + "/ /dir/", "give the destination a file name"},
		{"checksum without a URL", "ADD --checksum=sha256:" + strings.Repeat("0", 64) + " a.txt /x", "apply only to URLs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bctx, err := NewContext(writeTree(t, map[string]fsEntry{"a.txt": {Content: "a"}}))
			if err != nil {
				t.Fatal(err)
			}
			defer bctx.Close()
			_, _, err = Convert([]byte("FROM debian\n"+tc.add+"\n"), Options{Context: bctx})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "Dockerfile:2: ") {
				t.Fatalf("error %v, want one on line 2 with %q", err, tc.want)
			}
		})
	}
}
