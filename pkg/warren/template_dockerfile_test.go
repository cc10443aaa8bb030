package warren

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/pkg/warren/dockerfile"
)

const multiStageDockerfile = `FROM golang:1.22 AS builder
COPY go.mod main.go /src/
RUN go build -o /out/app /src
FROM debian
COPY --from=builder /out/app /usr/local/bin/app
COPY static /srv/static
COPY main.go /srv/
CMD ["app"]
`

const singleStageDockerfile = `FROM debian
ARG GREETING=hello
COPY static /srv/static
RUN echo $GREETING && exit 1
`

// buildContext writes a build context with df as its Dockerfile and
// returns its directory and the conversion BuildDockerfile will make.
func buildContext(t *testing.T, df string) (string, *rest.BuildStart, *dockerfile.Context) {
	t.Helper()
	dir := writeContext(t, df)
	bctx, err := dockerfile.NewContext(dir)
	if err != nil {
		t.Fatal(err)
	}
	req, _, err := dockerfile.Convert([]byte(df), dockerfile.Options{Context: bctx})
	if err != nil {
		t.Fatal(err)
	}
	return dir, req, bctx
}

// writeContext writes a build context with df as its Dockerfile.
func writeContext(t *testing.T, df string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"Dockerfile": df, "go.mod": "module x\n", "main.go": "package main\n", "static/index.html": "<h1>hi</h1>"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hashOf finds the files hash of the COPY of src.
func hashOf(t *testing.T, req *rest.BuildStart, src string) string {
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
			dir, req, bctx := buildContext(t, multiStageDockerfile)
			f := newFakeTemplateAPI(t)
			f.absoluteURLs = absolute
			f.logs = []string{"step 1", "step 2", "step 3"}
			f.setPresent(hashOf(t, req, "main.go")) // only main.go is cached
			var logs []string
			ref, err := f.client(t).BuildDockerfile(t.Context(), DockerfileBuild{Name: "web", Tags: []string{"v1"}, Dir: dir,
				CPUCount: 2, MemoryMB: 1024, ReadyCmd: "true", NoCache: true, PollInterval: time.Millisecond,
				OnLog: func(e BuildLogEntry) { logs = append(logs, e.Message) }})
			if err != nil {
				t.Fatal(err)
			}
			if ref.TemplateID != "tpl-web" || ref.BuildID != "build-1" {
				t.Errorf("ref %+v", ref)
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
			req.ReadyCmd, req.Force = "true", true
			if got, want := mustJSON(t, f.startedRequest()), mustJSON(t, req); !bytes.Equal(got, want) {
				t.Errorf("started build\n%s\nwant\n%s", got, want)
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
		build      DockerfileBuild
		reason     map[string]any
		want       string
		started    bool
	}{
		{"server reason with the Dockerfile line", singleStageDockerfile, DockerfileBuild{Name: "web"},
			map[string]any{"message": "command exited with 1", "step": "4"}, "Dockerfile:4: build failed at step 4: command exited with 1", true},
		{"no line guessed with stages", multiStageDockerfile, DockerfileBuild{Name: "web"},
			map[string]any{"message": "no space left", "step": "2"}, "build failed at step 2: no space left", true},
		{"request refused", singleStageDockerfile, DockerfileBuild{Name: "bad name"}, nil,
			"requesting build of bad name: warren: 400 Bad Request: invalid template name", false},
		{"no name", singleStageDockerfile, DockerfileBuild{}, nil, "building a Dockerfile: invalid request: no template name", false},
		{"a target that is not there", multiStageDockerfile, DockerfileBuild{Name: "web", Target: "tester"}, nil,
			`target stage "tester" is not in the Dockerfile (no FROM ... AS tester)`, false},
		{"a syntax error", "FROM debian\nFROBNICATE x\n", DockerfileBuild{Name: "web"}, nil, "Dockerfile:2: unknown instruction", false},
		{"no Dockerfile", singleStageDockerfile, DockerfileBuild{Name: "web", Dockerfile: "Missing"}, nil, "open Missing: no such file or directory", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeContext(t, tc.dockerfile)
			f := newFakeTemplateAPI(t)
			f.finalStatus, f.reason = "error", tc.reason
			b := tc.build
			b.Dir, b.PollInterval = dir, time.Millisecond
			_, err := f.client(t).BuildDockerfile(t.Context(), b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var be *BuildError
			if tc.reason != nil && (!errors.As(err, &be) || be.Message != tc.reason["message"]) {
				t.Errorf("error %#v is not the server's BuildError", err)
			}
			if (f.startedRequest() != nil) != tc.started {
				t.Errorf("build started: %v, want %v", f.startedRequest() != nil, tc.started)
			}
		})
	}
}

// TestBuildDockerfileArgs: build args reach the conversion, and its
// warnings reach OnWarning before the build.
func TestBuildDockerfileArgs(t *testing.T) {
	t.Parallel()
	df := "FROM debian\nARG GREETING=hello\nMAINTAINER me\nRUN echo $GREETING\n"
	dir := writeContext(t, df)
	f := newFakeTemplateAPI(t)
	var warnings []string
	_, err := f.client(t).BuildDockerfile(t.Context(), DockerfileBuild{Name: "web", Dir: dir, PollInterval: time.Millisecond,
		BuildArgs: map[string]string{"GREETING": "howdy"}, OnWarning: func(w string) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	var run *rest.Step
	if st := f.startedRequest(); st != nil {
		for i, s := range st.Steps {
			if s.Type == wire.StepRun {
				run = &st.Steps[i]
			}
		}
	}
	if run == nil || run.Env["GREETING"] != "howdy" || run.Line != 4 {
		t.Errorf("RUN step %+v, want GREETING=howdy", run)
	}
	if len(warnings) == 0 || !strings.HasPrefix(warnings[0], "Dockerfile:3:") {
		t.Errorf("warnings %q, want one for MAINTAINER", warnings)
	}
}
