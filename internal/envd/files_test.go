package envd_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

type uploaded struct {
	Path     string            `json:"path"`
	Name     string            `json:"name"`
	Type     string            `json:"type"`
	Metadata map[string]string `json:"metadata"`
}

// multipartBody builds a form with one "file" part per filename (kept
// verbatim in Content-Disposition, directories included) plus an ignored
// field.
func multipartBody(t *testing.T, files [][2]string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("other", "ignored"); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, f[0]))
		h.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(f[1]))
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

func gz(t *testing.T, data []byte) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// uploadCase is one POST /files request and what it must produce.
type uploadCase struct {
	name    string
	query   string
	body    io.Reader
	headers map[string]string
	status  int
	want    map[string]string // path → content
}

func uploadCases(t *testing.T, e *envdtest.Env, dir string) []uploadCase {
	multi, multiCT := multipartBody(t, [][2]string{{dir + "/x/y/b.txt", "bee"}, {"rel/c.txt", "sea"}})
	single, singleCT := multipartBody(t, [][2]string{{"ignored-name.txt", "one"}})
	gzMulti, gzMultiCT := multipartBody(t, [][2]string{{dir + "/gzm.txt", "zipped form"}})
	two, twoCT := multipartBody(t, [][2]string{{"a", "1"}, {"b", "2"}})
	none, noneCT := multipartBody(t, nil)
	return []uploadCase{
		{name: "multipart full paths", body: multi, headers: map[string]string{"Content-Type": multiCT}, status: 200,
			want: map[string]string{dir + "/x/y/b.txt": "bee", e.Home + "/rel/c.txt": "sea"}},
		{name: "multipart with path", query: "path=" + url.QueryEscape(dir+"/single.txt"), body: single, headers: map[string]string{"Content-Type": singleCT}, status: 200,
			want: map[string]string{dir + "/single.txt": "one"}},
		{name: "gzip multipart", body: gz(t, gzMulti.Bytes()), headers: map[string]string{"Content-Type": gzMultiCT, "Content-Encoding": "gzip"}, status: 200,
			want: map[string]string{dir + "/gzm.txt": "zipped form"}},
		{name: "octet-stream", query: "path=" + url.QueryEscape(dir+"/new/raw.bin"), body: strings.NewReader("raw bytes"), headers: map[string]string{"Content-Type": "application/octet-stream"}, status: 200,
			want: map[string]string{dir + "/new/raw.bin": "raw bytes"}},
		{name: "octet-stream relative", query: "path=o.txt", body: strings.NewReader("o"), headers: map[string]string{"Content-Type": "application/octet-stream"}, status: 200,
			want: map[string]string{e.Home + "/o.txt": "o"}},
		{name: "gzip octet-stream", query: "path=" + url.QueryEscape(dir+"/gz.txt"), body: gz(t, []byte("unzipped")), headers: map[string]string{"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"}, status: 200,
			want: map[string]string{dir + "/gz.txt": "unzipped"}},
		{name: "octet-stream without path", body: strings.NewReader("x"), headers: map[string]string{"Content-Type": "application/octet-stream"}, status: 400},
		{name: "path and two parts", query: "path=" + url.QueryEscape(dir+"/two"), body: two, headers: map[string]string{"Content-Type": twoCT}, status: 400},
		{name: "no file parts", body: none, headers: map[string]string{"Content-Type": noneCT}, status: 400},
		{name: "target is a directory", query: "path=" + url.QueryEscape(dir), body: strings.NewReader("x"), headers: map[string]string{"Content-Type": "application/octet-stream"}, status: 400},
		{name: "corrupt gzip", query: "path=" + url.QueryEscape(dir+"/bad"), body: strings.NewReader("not gzip"), headers: map[string]string{"Content-Encoding": "gzip"}, status: 400},
		{name: "unknown encoding", query: "path=" + url.QueryEscape(dir+"/bad"), body: strings.NewReader("x"), headers: map[string]string{"Content-Encoding": "br"}, status: 400},
		{name: "unknown user", query: "username=nobody-here&path=x", body: strings.NewReader("x"), status: 401},
	}
}

func TestUpload(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	tests := uploadCases(t, e, t.TempDir())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := do(t, e, http.MethodPost, "/files?"+tt.query, tt.body, tt.headers)
			if code != tt.status {
				t.Fatalf("status = %d (%s), want %d", code, body, tt.status)
			}
			if code != http.StatusOK {
				var eb struct{ Code int }
				if err := json.Unmarshal([]byte(body), &eb); err != nil || eb.Code != code {
					t.Errorf("error body = %s", body)
				}
				return
			}
			var res []uploaded
			if err := json.Unmarshal([]byte(body), &res); err != nil {
				t.Fatal(err)
			}
			if len(res) != len(tt.want) {
				t.Fatalf("response = %s", body)
			}
			for _, r := range res {
				content, ok := tt.want[r.Path]
				if !ok || r.Type != "file" || r.Name != filepath.Base(r.Path) {
					t.Errorf("unexpected result %+v", r)
					continue
				}
				if got := readFile(t, r.Path); got != content {
					t.Errorf("%s = %q, want %q", r.Path, got, content)
				}
			}
		})
	}
}

func TestUploadMetadata(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	dir := t.TempDir()
	upload := func(headers map[string]string) (int, string) {
		h := map[string]string{"Content-Type": "application/octet-stream"}
		for k, v := range headers {
			h[k] = v
		}
		code, body, _ := do(t, e, http.MethodPost, "/files?path="+url.QueryEscape(dir+"/m.txt"), strings.NewReader("m"), h)
		return code, body
	}
	long := strings.Repeat("k", 247)
	for name, h := range map[string]map[string]string{
		"key too long":    {"X-Metadata-" + long: "v"},
		"total too large": {"X-Metadata-A": strings.Repeat("v", 4000), "X-Metadata-B": strings.Repeat("v", 200)},
		"not printable":   {"X-Metadata-A": "caf\u00e9"},
	} {
		if code, body := upload(h); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, code, body)
		}
	}
	if unix.Setxattr(dir, "user.probe", []byte("1"), 0) != nil {
		t.Skip("no user xattrs on this filesystem")
	}
	code, body := upload(map[string]string{"X-Metadata-Owner": "Alice", "X-Metadata-Purpose": "test"})
	var res []uploaded
	if err := json.Unmarshal([]byte(body), &res); code != http.StatusOK || err != nil || len(res) != 1 {
		t.Fatalf("upload = %d %s", code, body)
	}
	if md := res[0].Metadata; md["owner"] != "Alice" || md["purpose"] != "test" {
		t.Errorf("metadata = %v", md)
	}
	// A second upload replaces all metadata.
	if code, body := upload(map[string]string{"X-Metadata-Owner": "Bob"}); code != http.StatusOK {
		t.Fatalf("re-upload = %d %s", code, body)
	}
	buf := make([]byte, 64)
	if _, err := unix.Getxattr(dir+"/m.txt", "user.e2b.purpose", buf); err == nil {
		t.Error("old metadata survived a new upload")
	}
	if n, err := unix.Getxattr(dir+"/m.txt", "user.e2b.owner", buf); err != nil || string(buf[:n]) != "Bob" {
		t.Errorf("owner xattr = %q %v", buf[:max(n, 0)], err)
	}
}

func TestUploadOwnedByUser(t *testing.T) {
	envdtest.RequireRoot(t)
	t.Parallel()
	e := envdtest.New(t)
	code, body, _ := do(t, e, http.MethodPost, "/files?username="+envdtest.SBUser+"&path=d1/d2/f.txt", strings.NewReader("x"), nil)
	if code != http.StatusOK {
		t.Fatalf("upload = %d %s", code, body)
	}
	for _, p := range []string{e.SBHome + "/d1", e.SBHome + "/d1/d2", e.SBHome + "/d1/d2/f.txt"} {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil || st.Uid != envdtest.SBUID || st.Gid != envdtest.SBUID {
			t.Errorf("%s owned by %d:%d (%v)", p, st.Uid, st.Gid, err)
		}
	}
}

func TestDownload(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	dir := t.TempDir()
	content := strings.Repeat("downloadable ", 1000)
	if err := os.WriteFile(dir+"/d.txt", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.Home+"/h.txt", []byte("home"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := "/files?path=" + url.QueryEscape(dir+"/d.txt")
	tests := []struct {
		name    string
		path    string
		headers map[string]string
		status  int
		gzipped bool
		want    string
	}{
		{name: "plain", path: q, status: 200, want: content},
		{name: "relative", path: "/files?path=h.txt", status: 200, want: "home"},
		{name: "gzip", path: q, headers: map[string]string{"Accept-Encoding": "gzip"}, status: 200, gzipped: true, want: content},
		{name: "gzip preferred among several", path: q, headers: map[string]string{"Accept-Encoding": "br, gzip;q=0.5, deflate"}, status: 200, gzipped: true, want: content},
		{name: "gzip refused", path: q, headers: map[string]string{"Accept-Encoding": "gzip;q=0"}, status: 200, want: content},
		{name: "nothing acceptable", path: q, headers: map[string]string{"Accept-Encoding": "br, identity;q=0"}, status: 406},
		{name: "directory", path: "/files?path=" + url.QueryEscape(dir), status: 400},
		{name: "missing", path: "/files?path=" + url.QueryEscape(dir+"/nope"), status: 404},
		{name: "unknown user", path: q + "&username=nobody-here", status: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, body, h := do(t, e, http.MethodGet, tt.path, nil, tt.headers)
			if code != tt.status {
				t.Fatalf("status = %d (%.200s), want %d", code, body, tt.status)
			}
			if code != http.StatusOK {
				if !strings.HasPrefix(body, fmt.Sprintf(`{"code":%d,"message":`, code)) {
					t.Errorf("error body = %s", body)
				}
				return
			}
			checkDownload(t, body, h, tt.gzipped, tt.want)
		})
	}
}

// checkDownload checks a 200 GET /files response.
func checkDownload(t *testing.T, body string, h http.Header, gzipped bool, want string) {
	t.Helper()
	if (h.Get("Content-Encoding") == "gzip") != gzipped {
		t.Fatalf("Content-Encoding = %q", h.Get("Content-Encoding"))
	}
	if gzipped {
		zr, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(zr)
		body = string(b)
	}
	if body != want {
		t.Errorf("body = %.50q…, want %.50q…", body, want)
	}
	if !strings.HasPrefix(h.Get("Content-Disposition"), "inline; filename=") || !strings.Contains(h.Get("Vary"), "Accept-Encoding") {
		t.Errorf("headers = %v", h)
	}
}
