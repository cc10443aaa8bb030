package apiserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestVolumeFilesStream: a file's bytes pass through the edge as they
// come, both ways: the service reads the start of an upload while the
// client has yet to send the rest, and the client reads the start of a
// download before the service has produced the rest. An edge that
// buffered the whole file would wait for ever here (bounded by step).
func TestVolumeFilesStream(t *testing.T) {
	const step = 5 * time.Second
	f := newVolumeFixture(t)
	f.vols.limit = 1 << 20
	got := make(chan []byte, 1)
	f.vols.written = func(first []byte) { got <- bytes.Clone(first) }

	pr, pw := io.Pipe()
	defer pw.Close() // before the server closes: its handler may read on
	answered := make(chan *http.Response, 1)
	go func() { answered <- f.send(t, "PUT", filA+"?path=/streamed", tokA, pr) }()
	if _, err := pw.Write([]byte("first part;")); err != nil {
		t.Fatal(err)
	}
	select {
	case first := <-got:
		if string(first) != "first part;" {
			t.Fatalf("the service first read %q", first)
		}
	case <-time.After(step):
		t.Fatal("the service saw nothing of the upload before its end: the edge buffers it")
	}
	_, _ = pw.Write([]byte("second part"))
	pw.Close()
	resp := <-answered
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload answered %d", resp.StatusCode)
	}
	testDownloadStreams(t, f, step)
}

// testDownloadStreams is TestVolumeFilesStream's download. Its first
// part is larger than the server's response buffer, so it reaches the
// client unless the edge holds it back.
func testDownloadStreams(t *testing.T, f *volumeFixture, step time.Duration) {
	head := strings.Repeat("h", 64<<10)
	resp := f.send(t, "PUT", filA+"?path=/big&force=true", tokA, strings.NewReader(head+"tail"))
	resp.Body.Close()
	rest := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(rest) }) }
	defer release() // before the server closes: its handler waits on rest
	f.vols.open = func(data []byte) io.ReadCloser {
		r, w := io.Pipe()
		go func() {
			_, _ = w.Write(data[:len(head)])
			<-rest
			_, _ = w.Write(data[len(head):])
			w.Close()
		}()
		return r
	}
	resp = f.send(t, "GET", filA+"?path=/big", tokA, nil)
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "application/octet-stream" || resp.ContentLength != int64(len(head)+4) {
		t.Errorf("download headers %v, length %d", resp.Header, resp.ContentLength)
	}
	first := make([]byte, len(head))
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(resp.Body, first); read <- err }()
	select {
	case err := <-read:
		if err != nil || string(first) != head {
			t.Fatalf("first bytes %.20q, %v", first, err)
		}
	case <-time.After(step):
		t.Fatal("the client got nothing before the whole file was read: the edge buffers it")
	}
	release()
	tail, err := io.ReadAll(resp.Body)
	if err != nil || string(tail) != "tail" {
		t.Fatalf("rest of the download %q, %v", tail, err)
	}
}

// TestVolumesNotAvailable: a server without a volume service answers
// every volume route 501 saying so, after the same access check.
func TestVolumesNotAvailable(t *testing.T) {
	st := sqlitetest.Open(t)
	secret, rec, err := apikey.Create(apikey.Spec{Name: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateAPIKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	srv := New(Options{Store: st})
	n := 0
	for _, rt := range routeTable {
		method, path, _ := strings.Cut(rt.pattern, " ")
		if !strings.HasPrefix(path, "/volume") {
			continue
		}
		n++
		path = strings.ReplaceAll(path, "{volumeID}", "vol1") + "?path=/a"
		for _, auth := range []string{"", "right"} {
			r := httptest.NewRequest(method, path, strings.NewReader(`{"name":"x"}`))
			switch {
			case auth == "" && rt.access == volToken:
			case auth == "":
			case rt.access == volToken:
				r.Header.Set("Authorization", "Bearer some-token")
			default:
				r.Header.Set("X-API-KEY", secret)
			}
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			want := http.StatusUnauthorized
			if auth != "" {
				want = http.StatusNotImplemented
			}
			if w.Code != want || want == http.StatusNotImplemented && !strings.Contains(w.Body.String(), "volumes are not available on this server") {
				t.Errorf("%s (auth %q) = %d %s, want %d", rt.pattern, auth, w.Code, w.Body, want)
			}
			checkErrorBody(t, w.Body.Bytes(), w.Code)
		}
	}
	if n != 11 {
		t.Errorf("found %d volume routes, want 11", n)
	}
}

// TestVolumeRoutesOnANode: what the API role relays is served on a node:
// a control route signed with the key's hash, a content route with the
// volume's token and no signature (the API role sends none with it).
func TestVolumeRoutesOnANode(t *testing.T) {
	f := newVolumeFixture(t, func(o *Options) {
		o.Cluster, o.NodeName = clusterSigner(t, testClusterSecret, time.Now), "n1"
	})
	tests := []struct {
		name, method, path, how, bearer string
		status                          int
	}{
		{"control, signed", "GET", "/volumes/{a}", "signed", "", 200},
		{"control, signed by another cluster", "GET", "/volumes/{a}", "other-secret", "", 401},
		{"content, the token", "GET", dirA + "?path=/", "", "token-{a}", 200},
		{"content, signed but no token", "GET", dirA + "?path=/", "signed", "", 401},
		{"content, another volume's token", "GET", dirA + "?path=/", "", "token-{b}", 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := expand(tc.path, f.vars)
			var resp *http.Response
			if tc.how != "" {
				resp = doSigned(t, f.srv, tc.method, path, "", f.keys["key"], tc.how)
			} else {
				resp = doBearer(t, f.srv, tc.method, path, "", expand(tc.bearer, f.vars))
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("%s = %d %s, want %d", tc.name, resp.StatusCode, raw, tc.status)
			}
		})
	}
}
