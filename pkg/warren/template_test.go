package warren

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/api/wire"
)

// TestTemplateErrors: error answers keep the operation and the server's
// message and classify by status.
func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	f := newFakeTemplateAPI(t)
	c := f.client(t)
	cases := []struct {
		name   string
		call   func(context.Context) error
		want   string
		status int
		class  error
	}{
		{"bad key", func(ctx context.Context) error {
			bad, _ := New(Config{APIURL: f.srv.URL, APIKey: "wrong"})
			_, err := bad.ListTemplates(ctx)
			return err
		}, "listing templates: warren: 401 Unauthorized: Invalid API key", http.StatusUnauthorized, ErrUnauthorized},
		{"request build rejected", func(ctx context.Context) error {
			_, err := c.RequestBuild(ctx, "bad name", BuildOptions{})
			return err
		}, "requesting build of bad name: warren: 400 Bad Request: invalid template name", http.StatusBadRequest, ErrInvalid},
		{"get missing", func(ctx context.Context) error {
			_, err := c.GetTemplate(ctx, "nope")
			return err
		}, "getting template nope: warren: 404 Not Found: template 'nope' not found", http.StatusNotFound, ErrNotFound},
		{"delete missing", func(ctx context.Context) error {
			return c.DeleteTemplate(ctx, "nope")
		}, "deleting template nope: warren: 404 Not Found: template not found", http.StatusNotFound, ErrNotFound},
		{"status of unknown build", func(ctx context.Context) error {
			_, err := c.BuildStatus(ctx, "tpl", "other", 0)
			return err
		}, "getting status of build other: warren: 404 Not Found: build not found", http.StatusNotFound, ErrNotFound},
		{"assign to missing build", func(ctx context.Context) error {
			_, err := c.AssignTags(ctx, "web:v9", []string{"prod"})
			return err
		}, "tagging web:v9: warren: 404 Not Found: target build not found", http.StatusNotFound, ErrNotFound},
		{"cancel a finished build", func(ctx context.Context) error {
			return c.CancelBuild(ctx, "tpl", "build-0")
		}, "cancelling build build-0: warren: 409 Conflict: build 'x' is not running (it is ready)", http.StatusConflict, ErrConflict},
		{"body that is not JSON", func(ctx context.Context) error {
			_, err := c.TemplateExists(ctx, "broken")
			return err
		}, "checking template name broken: warren: 500 Internal Server Error: Internal Server Error", http.StatusInternalServerError, ErrServer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call(t.Context())
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tc.status {
				t.Errorf("error %#v is not an APIError with status %d", err, tc.status)
			}
			if !errors.Is(err, tc.class) || (tc.class != ErrNotFound) == errors.Is(err, ErrNotFound) {
				t.Errorf("error %v misclassified, want %v", err, tc.class)
			}
		})
	}
}

func TestRequestBuild(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		opts     BuildOptions
		wantKeys []string
	}{
		{"defaults left to the server", BuildOptions{}, []string{"name"}},
		{"everything", BuildOptions{Tags: []string{"v1", "prod"}, CPUCount: 2, MemoryMB: 2048}, []string{"cpuCount", "memoryMB", "name", "tags"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeTemplateAPI(t)
			ref, err := f.client(t).RequestBuild(t.Context(), "web", tc.opts)
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

func TestTemplateFilesAndUpload(t *testing.T) {
	t.Parallel()
	for _, absolute := range []bool{false, true} {
		name := map[bool]string{false: "relative URL", true: "absolute URL"}[absolute]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeTemplateAPI(t)
			f.absoluteURLs = absolute
			c := f.client(t)
			ctx := t.Context()
			link, err := c.TemplateFiles(ctx, "tpl", "h1")
			if err != nil || link.Present || link.URL == "" || link.Headers["X-Upload-Token"] != "t1" {
				t.Fatalf("TemplateFiles = %+v, %v", link, err)
			}
			if strings.HasPrefix(link.URL, "http") != absolute {
				t.Fatalf("url %q", link.URL)
			}
			body := "tar bytes"
			if err := c.UploadFiles(ctx, link, strings.NewReader(body), int64(len(body))); err != nil {
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
			if link, _ := c.TemplateFiles(ctx, "tpl", "h1"); !link.Present {
				t.Error("uploaded files are not present")
			}
		})
	}
}

func TestUploadRejected(t *testing.T) {
	t.Parallel()
	f := newFakeTemplateAPI(t)
	err := f.client(t).UploadFiles(t.Context(), FilesLink{URL: "/upload/h?token=wrong"}, strings.NewReader("x"), 1)
	if err == nil || err.Error() != "uploading files: warren: 403 Forbidden: bad upload token" || !errors.Is(err, ErrUnauthorized) {
		t.Errorf("error %v", err)
	}
}

func TestWaitBuild(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		final   string
		reason  map[string]any
		logs    []string
		wantErr string
	}{
		{"ready, log drained after the end", "ready", nil, []string{"a", "b", "c", "d", "e", "f", "g"}, ""},
		{"ready without log", "ready", nil, nil, ""},
		{"failed with reason and step", "error", map[string]any{"message": "exit status 1", "step": "3", "logEntries": []any{}}, []string{"x"}, "build failed at step 3: exit status 1"},
		{"failed naming its line", "error", map[string]any{"message": "Dockerfile:4: RUN exited with code 1", "logEntries": []any{}}, nil, "build failed: Dockerfile:4: RUN exited with code 1"},
		{"failed without reason", "error", nil, nil, "build failed: unknown error"},
		{"unknown status", "exploded", nil, nil, `build build-1: unknown status "exploded"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeTemplateAPI(t)
			f.finalStatus, f.reason, f.logs = tc.final, tc.reason, tc.logs
			var got []string
			st, err := f.client(t).WaitBuild(t.Context(), "tpl", "build-1", WaitOptions{PollInterval: time.Millisecond, OnLog: func(e BuildLogEntry) {
				got = append(got, e.Message)
				if e.Timestamp.IsZero() || e.Level != "info" || e.Step == "" {
					t.Errorf("entry %+v", e)
				}
			}})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			var be *BuildError
			if (tc.final == "error") != errors.As(err, &be) || be != nil && (be.BuildID != "build-1" || be.TemplateID != "tpl") {
				t.Errorf("error %#v: a BuildError only for a failed build, with its IDs", err)
			}
			if st == nil || string(st.Status) != tc.final {
				t.Errorf("final status %+v", st)
			}
			if !slices.Equal(got, tc.logs) {
				t.Errorf("logs %q, want %q", got, tc.logs)
			}
		})
	}
}

func TestWaitBuildCancelled(t *testing.T) {
	t.Parallel()
	f := newFakeTemplateAPI(t)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := f.client(t).WaitBuild(ctx, "tpl", "build-1", WaitOptions{PollInterval: time.Hour}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v", err)
	}
}

func TestBuildLogsAndCancel(t *testing.T) {
	t.Parallel()
	f := newFakeTemplateAPI(t)
	f.logs = []string{"a", "b", "c"}
	c := f.client(t)
	logs, err := c.BuildLogs(t.Context(), "tpl", "build-1", BuildLogsOptions{Limit: 2, Level: "info", Cursor: time.UnixMilli(1000)})
	if err != nil || len(logs) != 2 || logs[1].Message != "b" || logs[1].Step != "1" {
		t.Fatalf("BuildLogs = %+v, %v", logs, err)
	}
	if u := f.url(); !strings.Contains(u, "limit=2") || !strings.Contains(u, "level=info") || !strings.Contains(u, "cursor=1000") || !strings.Contains(u, "direction=forward") {
		t.Errorf("query %s", u)
	}
	if err := c.CancelBuild(t.Context(), "tpl", "build-1"); err != nil {
		t.Errorf("CancelBuild: %v", err)
	}
}

func TestTemplates(t *testing.T) {
	t.Parallel()
	f := newFakeTemplateAPI(t)
	c := f.client(t)
	ctx := t.Context()

	list, err := c.ListTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "tpl-1" || list[0].MemoryMB != 1024 || !list[0].LastSpawnedAt.IsZero() ||
		list[0].CreatedAt.IsZero() || list[0].SpawnCount != 7 || list[0].BuildStatus != BuildReady {
		t.Errorf("ListTemplates = %+v", list)
	}

	// IDs with "/" and ":" travel as one path segment.
	got, err := c.GetTemplate(ctx, "team/web:v1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "tpl-1" || len(got.Builds) != 1 || got.Builds[0].FinishedAt.IsZero() || got.LastSpawnedAt.IsZero() ||
		got.Labels["team"] != "agents" || !slices.Equal(got.Builds[0].Tags, []string{"v1"}) {
		t.Errorf("GetTemplate = %+v", got)
	}

	if err := c.DeleteTemplate(ctx, "tpl-1"); err != nil {
		t.Fatal(err)
	}

	tags, err := c.TemplateTags(ctx, "tpl-1")
	if err != nil || len(tags) != 1 || tags[0].Tag != "v1" || tags[0].BuildID != "build-1" {
		t.Errorf("TemplateTags = %+v, %v", tags, err)
	}

	as, err := c.AssignTags(ctx, "web:v1", []string{"prod", "stable"})
	if err != nil || as.BuildID != "build-1" || !slices.Equal(as.Tags, []string{"prod", "stable"}) {
		t.Errorf("AssignTags = %+v, %v", as, err)
	}
	if err := c.RemoveTags(ctx, "web", []string{"prod"}); err != nil {
		t.Fatal(err)
	}
	if b := f.body(); b["name"] != "web" || len(b["tags"].([]any)) != 1 {
		t.Errorf("RemoveTags sent %v", b)
	}
	want := []string{"GET /templates", "GET /templates/team%2Fweb:v1", "DELETE /templates/tpl-1", "GET /templates/tpl-1/tags", "POST /templates/tags", "DELETE /templates/tags"}
	if log := f.requestLog(); !slices.Equal(log, want) {
		t.Errorf("requests %q, want %q", log, want)
	}
}

func TestTemplateExists(t *testing.T) {
	t.Parallel()
	f := newFakeTemplateAPI(t)
	cases := []struct {
		alias string
		want  bool
	}{
		{"mine", true},
		{"theirs", true}, // 403: taken by another team
		{"free", false},  // 404
	}
	for _, tc := range cases {
		t.Run(tc.alias, func(t *testing.T) {
			t.Parallel()
			got, err := f.client(t).TemplateExists(t.Context(), tc.alias)
			if err != nil || got != tc.want {
				t.Errorf("TemplateExists(%s) = %v, %v; want %v", tc.alias, got, err, tc.want)
			}
		})
	}
}

// TestStartBuild: a definition built with api/wire's types (the builder's
// own) reaches the server as it was built.
func TestStartBuild(t *testing.T) {
	t.Parallel()
	f := newFakeTemplateAPI(t)
	ready := "test -f /app/ok"
	spec := rest.BuildStart{FromTemplate: "base", ReadyCmd: ready, Steps: []rest.Step{
		{Type: wire.StepRun, Args: []string{"mkdir -p /app && touch /app/ok", "root"}},
		{Type: wire.StepCopy, Args: []string{"src", "/app/"}, FilesHash: "h1"},
	}}
	if err := f.client(t).StartBuild(t.Context(), "tpl", "build-1", spec); err != nil {
		t.Fatal(err)
	}
	got := f.startedRequest()
	if got == nil || got.FromTemplate != "base" || got.ReadyCmd != ready || len(got.Steps) != 2 ||
		got.Steps[0].Args[1] != "root" || got.Steps[1].Type != "COPY" || got.Steps[1].FilesHash != "h1" {
		t.Errorf("started %+v", got)
	}
}
