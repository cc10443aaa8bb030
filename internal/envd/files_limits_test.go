package envd_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

// TestUploadNoSpace fills a tiny tmpfs: the upload must fail with 507.
func TestUploadNoSpace(t *testing.T) {
	envdtest.RequireRoot(t)
	t.Parallel()
	e := envdtest.New(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	body := strings.NewReader(strings.Repeat("x", 1<<20))
	code, got, _ := do(t, e, http.MethodPost, "/files?path="+url.QueryEscape(dir+"/big"), body, map[string]string{"Content-Type": "application/octet-stream"})
	if code != http.StatusInsufficientStorage || !strings.HasPrefix(got, `{"code":507,`) {
		t.Errorf("= %d %s", code, got)
	}
}

// zeros is an endless-looking reader of n zero bytes that allocates nothing.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n)
	clear(p[:k])
	z.n -= k
	return int(k), nil
}

// TestLargeFilesStreamed moves 256 MiB up and down: neither direction may
// buffer the file in memory. Not parallel: it samples the heap.
func TestLargeFilesStreamed(t *testing.T) {
	e := envdtest.New(t)
	const size = 256 << 20
	path := t.TempDir() + "/large.bin"
	var peak uint64
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapInuse)
	}
	runtime.GC()
	sample()
	base := peak

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.HTTP.URL+"/files?path="+url.QueryEscape(path), &sampling{r: &zeros{n: size}, every: 4 << 20, f: sample})
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if fi, err := os.Stat(path); resp.StatusCode != http.StatusOK || err != nil || fi.Size() != size {
		t.Fatalf("upload: %d, %v", resp.StatusCode, err)
	}

	resp, err = e.Client.Get(e.HTTP.URL + "/files?path=" + url.QueryEscape(path))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, &sampling{r: resp.Body, every: 4 << 20, f: sample})
	resp.Body.Close()
	if err != nil || n != size {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	if grown := peak - base; grown > 64<<20 {
		t.Errorf("heap in use grew by %d MiB moving a %d MiB file", grown>>20, size>>20)
	}
}

// sampling calls f every `every` bytes read through it.
type sampling struct {
	r     io.Reader
	every int
	f     func()
	since int
}

func (s *sampling) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.since += n
	if s.since >= s.every {
		s.since = 0
		s.f()
	}
	return n, err
}

// TestUploadErrorReachesSender fails an upload early while the client is
// still sending a large body. A client that sends the whole body before it
// reads (as many do) must still read the error: if envd answered at once and
// closed the connection, the reset would discard the answer.
func TestUploadErrorReachesSender(t *testing.T) {
	e := envdtest.New(t)
	file := t.TempDir() + "/plain"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const size = 32 << 20
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.HTTP.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("POST /files?path=%s HTTP/1.1\r\nHost: envd\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n",
		url.QueryEscape(file+"/under/x"), size)
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(conn, &zeros{n: size}); err != nil {
		t.Fatalf("sending the body: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(string(got), `{"code":400,`) {
		t.Fatalf("= %d %s", resp.StatusCode, got)
	}
}
