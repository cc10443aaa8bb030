package warren

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/pkg/warren/internal/convert"
)

// TestTemplateBuilder: the builder's steps reach the server as the build
// spec a Dockerfile would give, with quoting kept, the template base and
// start command set, and its COPY sources uploaded.
func TestTemplateBuilder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte("print('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFakeTemplateAPI(t)
	tpl := NewTemplate().FromTemplate("base").
		AptInstall("git", "it's").
		RunCmd("echo \"$HOME\"\nls -la").
		SetEnvs(map[string]string{"B": `a "quoted" $value`, "A": "1"}).
		Copy("app.py", "/home/user/app.py").
		SetWorkdir("/home/user").SetUser("user").
		SetStartCmd("python3 -m http.server 8000", "curl -sf localhost:8000")
	ref, err := f.client(t).BuildTemplate(t.Context(), "py-app", tpl, TemplateBuildOptions{Dir: dir, Tags: []string{"v2"}})
	if err != nil {
		t.Fatal(err)
	}
	if ref.TemplateID != "tpl-py-app" {
		t.Errorf("ref %+v", ref)
	}
	f.mu.Lock()
	spec := f.started
	f.mu.Unlock()
	if spec == nil || spec.FromTemplate != "base" || spec.FromImage != "" || spec.StartCmd != "python3 -m http.server 8000" || spec.ReadyCmd != "curl -sf localhost:8000" {
		t.Fatalf("spec %+v", spec)
	}
	// The conversion starts with the base's user and directory (USER
	// root, WORKDIR /); the builder's steps follow, ENV one per variable.
	var got []string
	var copyHash string
	for _, st := range spec.Steps[2:] {
		got = append(got, string(st.Type))
		switch st.Type {
		case wire.StepEnv:
			got = append(got, st.Args...)
		case wire.StepCopy:
			copyHash = st.FilesHash
			got = append(got, st.Args[1])
		case wire.StepWorkdir, wire.StepUser:
			got = append(got, st.Args[0])
		}
	}
	want := []string{"RUN", "RUN", "ENV", "A", "1", "ENV", "B", `a "quoted" $value`, "COPY", "/home/user/app.py", "WORKDIR", "/home/user", "USER", "user"}
	if !slices.Equal(got, want) {
		t.Errorf("steps\n got %q\nwant %q", got, want)
	}
	if _, ok := f.uploaded(copyHash); copyHash == "" || !ok {
		t.Errorf("app.py not uploaded (hash %q)", copyHash)
	}
	if _, err := f.client(t).BuildTemplate(t.Context(), "x", NewTemplate().RunCmd("true"), TemplateBuildOptions{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a builder without a base: %v", err)
	}
}

// TestBuildWithoutConverter: a program that did not link the Dockerfile
// converter in gets an error saying which package to import, before any
// request. Not parallel: it swaps the registered converter.
func TestBuildWithoutConverter(t *testing.T) {
	saved := convert.Dockerfile
	convert.Dockerfile = nil
	t.Cleanup(func() { convert.Dockerfile = saved })
	f := newFakeTemplateAPI(t)
	_, err := f.client(t).BuildDockerfile(t.Context(), DockerfileBuild{Name: "x", Content: []byte("FROM base\n")})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "pkg/warren/dockerfile") {
		t.Errorf("err = %v, want ErrInvalid naming the converter's package", err)
	}
	if log := f.requestLog(); len(log) != 0 {
		t.Errorf("requests sent without a converter: %v", log)
	}
}
