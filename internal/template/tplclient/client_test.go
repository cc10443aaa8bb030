package tplclient

import (
	"context"
	"errors"
	"github.com/warren-sandbox/warren/internal/wire"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	c := f.client()
	cases := []struct {
		name     string
		call     func(context.Context) error
		want     string
		status   int
		notFound bool
	}{
		{"bad key", func(ctx context.Context) error {
			_, err := New(f.srv.URL, "wrong", nil).List(ctx)
			return err
		}, "listing templates: Invalid API key", http.StatusUnauthorized, false},
		{"request build rejected", func(ctx context.Context) error {
			_, err := c.RequestBuild(ctx, "bad name", nil, 0, 0)
			return err
		}, "requesting build of bad name: invalid template name", http.StatusBadRequest, false},
		{"get missing", func(ctx context.Context) error {
			_, err := c.Get(ctx, "nope")
			return err
		}, "getting template nope: template 'nope' not found", http.StatusNotFound, true},
		{"delete missing", func(ctx context.Context) error {
			return c.Delete(ctx, "nope")
		}, "deleting template nope: template not found", http.StatusNotFound, true},
		{"status of unknown build", func(ctx context.Context) error {
			_, err := c.Status(ctx, "tpl", "other", 0)
			return err
		}, "getting status of build other: build not found", http.StatusNotFound, true},
		{"assign to missing build", func(ctx context.Context) error {
			_, err := c.AssignTags(ctx, "web:v9", []string{"prod"})
			return err
		}, "tagging web:v9: target build not found", http.StatusNotFound, true},
		{"body that is not JSON", func(ctx context.Context) error {
			_, err := c.Exists(ctx, "broken")
			return err
		}, "checking template name broken: upstream exploded", http.StatusInternalServerError, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call(t.Context())
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.StatusCode != tc.status {
				t.Errorf("error %#v is not an APIError with status %d", err, tc.status)
			}
			if IsNotFound(err) != tc.notFound {
				t.Errorf("IsNotFound = %v", !tc.notFound)
			}
		})
	}
}

func TestRequestBuild(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		tags     []string
		cpu, mem int
		wantKeys []string
	}{
		{"defaults left to the server", nil, 0, 0, []string{"name"}},
		{"everything", []string{"v1", "prod"}, 2, 2048, []string{"cpuCount", "memoryMB", "name", "tags"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			ref, err := f.client().RequestBuild(t.Context(), "web", tc.tags, tc.cpu, tc.mem)
			if err != nil {
				t.Fatal(err)
			}
			if ref.TemplateID != "tpl-web" || ref.BuildID != "build-1" || !slices.Equal(ref.Tags, []string{"default"}) {
				t.Errorf("ref %+v", ref)
			}
			var keys []string
			for k := range f.body() {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tc.wantKeys) {
				t.Errorf("request body %v, want keys %v", f.body(), tc.wantKeys)
			}
		})
	}
}

func TestFileLinkAndUpload(t *testing.T) {
	t.Parallel()
	for _, absolute := range []bool{false, true} {
		name := map[bool]string{false: "relative URL", true: "absolute URL"}[absolute]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.absoluteURLs = absolute
			c := f.client()
			ctx := t.Context()
			present, url, headers, err := c.FileLink(ctx, "tpl", "h1")
			if err != nil || present || url == "" {
				t.Fatalf("FileLink = %v %q %v", present, url, err)
			}
			if strings.HasPrefix(url, "http") != absolute {
				t.Fatalf("url %q", url)
			}
			body := "tar bytes"
			if err := c.Upload(ctx, url, headers, strings.NewReader(body), int64(len(body))); err != nil {
				t.Fatal(err)
			}
			up, _ := f.uploaded("h1")
			if string(up.body) != body || up.length != int64(len(body)) {
				t.Errorf("uploaded %q with length %d", up.body, up.length)
			}
			// The API key goes only to the API itself, never to storage.
			if got := up.header.Get("X-API-Key") != ""; got == absolute {
				t.Errorf("API key sent: %v", got)
			}
			if present, _, _, _ := c.FileLink(ctx, "tpl", "h1"); !present {
				t.Error("uploaded files are not present")
			}
		})
	}
}

func TestUploadRejected(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	err := f.client().Upload(t.Context(), "/upload/h?token=wrong", nil, strings.NewReader("x"), 1)
	if err == nil || err.Error() != "uploading files: bad upload token" {
		t.Errorf("error %v", err)
	}
}

func TestWait(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		final   string
		reason  map[string]any
		logs    []string
		wantErr string
	}{
		{"ready, log drained after the end", wire.BuildReady, nil, []string{"a", "b", "c", "d", "e", "f", "g"}, ""},
		{"ready without log", wire.BuildReady, nil, nil, ""},
		{"failed with reason and step", wire.BuildError, map[string]any{"message": "exit status 1", "step": "3"}, []string{"x"}, "build failed at step 3: exit status 1"},
		{"failed with a numeric step", wire.BuildError, map[string]any{"message": "boom", "step": 2}, nil, "build failed at step 2: boom"},
		{"failed without reason", wire.BuildError, nil, nil, "build failed: unknown error"},
		{"unknown status", "exploded", nil, nil, `build build-1: unknown status "exploded"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.finalStatus, f.reason, f.logs = tc.final, tc.reason, tc.logs
			var got []string
			st, err := f.client().Wait(t.Context(), "tpl", "build-1", func(e wire.BuildLogEntry) {
				got = append(got, e.Message)
				if e.Timestamp.IsZero() || e.Level != "info" {
					t.Errorf("entry %+v", e)
				}
			})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if st == nil || st.Status != tc.final {
				t.Errorf("final status %+v", st)
			}
			if !slices.Equal(got, tc.logs) {
				t.Errorf("logs %q, want %q", got, tc.logs)
			}
		})
	}
}

func TestWaitCancelled(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	c := f.client()
	c.PollInterval = time.Hour
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Wait(ctx, "tpl", "build-1", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v", err)
	}
}
