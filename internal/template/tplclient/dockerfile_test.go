package tplclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/warren-sandbox/warren/internal/wire"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/template/dockerfile"
)

const multiStage = `FROM golang:1.22 AS builder
COPY go.mod main.go /src/
RUN go build -o /out/app /src
FROM debian
COPY --from=builder /out/app /usr/local/bin/app
COPY static /srv/static
COPY main.go /srv/
CMD ["app"]
`

const singleStage = `FROM debian
COPY static /srv/static
RUN exit 1
`

// convert writes a build context and converts the Dockerfile in it.
func convert(t *testing.T, df string) (*wire.BuildStart, *dockerfile.Context) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"go.mod": "module x\n", "main.go": "package main\n", "static/index.html": "<h1>hi</h1>"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bctx, err := dockerfile.NewContext(dir)
	if err != nil {
		t.Fatal(err)
	}
	req, _, err := dockerfile.Convert([]byte(df), dockerfile.Options{Context: bctx})
	if err != nil {
		t.Fatal(err)
	}
	return req, bctx
}

// hashOf finds the files hash of the COPY of src.
func hashOf(t *testing.T, req *wire.BuildStart, src string) string {
	t.Helper()
	for _, s := range copySteps(req) {
		if s.Args[0] == src {
			return s.FilesHash
		}
	}
	t.Fatalf("no COPY of %s", src)
	return ""
}

func TestBuildDockerfile(t *testing.T) {
	t.Parallel()
	for _, absolute := range []bool{false, true} {
		t.Run(map[bool]string{false: "relative upload URL", true: "absolute upload URL"}[absolute], func(t *testing.T) {
			t.Parallel()
			req, bctx := convert(t, multiStage)
			f := newFakeAPI(t)
			f.absoluteURLs = absolute
			f.logs = []string{"step 1", "step 2", "step 3"}
			f.setPresent(hashOf(t, req, "main.go")) // only main.go is cached
			var logs []string
			err := BuildDockerfile(t.Context(), f.client(), req, bctx, "web", []string{"v1"}, 2, 1024, func(e wire.BuildLogEntry) {
				logs = append(logs, e.Message)
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, src := range []string{"go.mod", "static"} {
				up, ok := f.uploaded(hashOf(t, req, src))
				var want bytes.Buffer
				if err := bctx.WriteTar(&want, src); err != nil {
					t.Fatal(err)
				}
				if !ok || !bytes.Equal(up.body, want.Bytes()) || up.length != int64(want.Len()) {
					t.Errorf("upload of %s: %v, %d bytes, length %d; want %d bytes", src, ok, len(up.body), up.length, want.Len())
				}
			}
			if _, ok := f.uploaded(hashOf(t, req, "main.go")); ok {
				t.Error("main.go was uploaded although the server has it")
			}
			if got, _ := json.Marshal(f.startedRequest()); !bytes.Equal(got, mustJSON(t, req)) {
				t.Errorf("started build\n%s\nwant\n%s", got, mustJSON(t, req))
			}
			for _, want := range []string{"Uploaded 'go.mod'", "Uploaded 'static'", "Skipping upload of 'main.go', already cached", "step 1", "step 3"} {
				if !slices.Contains(logs, want) {
					t.Errorf("log lacks %q: %q", want, logs)
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuildDockerfileFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		dockerfile string
		buildName  string
		reason     map[string]any
		noContext  bool
		want       string
	}{
		{"server reason with the Dockerfile line", singleStage, "web",
			map[string]any{"message": "command exited with 1", "step": "4"}, false,
			"Dockerfile:3: build failed at step 4: command exited with 1"},
		{"no line guessed with stages", multiStage, "web",
			map[string]any{"message": "no space left", "step": "2"}, false,
			"build failed at step 2: no space left"},
		{"request refused", singleStage, "bad name", nil, false,
			"requesting build of bad name: invalid template name"},
		{"no context for a COPY", singleStage, "web", nil, true,
			"Dockerfile:2: COPY static needs a build context"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, bctx := convert(t, tc.dockerfile)
			if tc.noContext {
				bctx = nil
			}
			f := newFakeAPI(t)
			f.finalStatus, f.reason = wire.BuildError, tc.reason
			err := BuildDockerfile(t.Context(), f.client(), req, bctx, tc.buildName, nil, 0, 0, nil)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var be *BuildError
			if tc.reason != nil && (!errors.As(err, &be) || be.Message != tc.reason["message"]) {
				t.Errorf("error %#v is not the server's BuildError", err)
			}
			if strings.Contains(tc.want, "build failed") && f.startedRequest() == nil {
				t.Error("the build was never started")
			}
		})
	}
}
