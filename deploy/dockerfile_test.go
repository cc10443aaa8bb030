package deploy

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// TestDockerfile parses deploy/Dockerfile as BuildKit would (no build: there
// is no Docker here) and checks the image's shape: binaries built from the
// repository, runsc at the pinned version, a Debian 12 runtime with what the
// node role runs, warren as the entrypoint with envd beside it.
func TestDockerfile(t *testing.T) {
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 3 || stages[0].Name != "build" || stages[1].Name != "runsc" {
		t.Fatalf("want stages build, runsc and the runtime, got %d", len(stages))
	}
	final := stages[len(stages)-1]
	if final.BaseName != "debian:12-slim" {
		t.Errorf("runtime base %s, want debian:12-slim", final.BaseName)
	}
	runs := strings.Join(commands[*instructions.RunCommand](stages[0].Commands, func(r *instructions.RunCommand) []string { return r.CmdLine }), "\n")
	for _, pkg := range []string{"./cmd/envd", "./cmd/interpreter", "./cmd/warren"} {
		if !strings.Contains(runs, pkg) {
			t.Errorf("build stage does not build %s", pkg)
		}
	}
	checkRunscPin(t, stages[1])
	install := strings.Join(commands[*instructions.RunCommand](final.Commands, func(r *instructions.RunCommand) []string { return r.CmdLine }), " ")
	for _, pkg := range []string{"runc", "nftables", "iproute2", "e2fsprogs", "debootstrap", "util-linux", "ca-certificates"} {
		if !slices.Contains(strings.Fields(install), pkg) {
			t.Errorf("runtime does not install %s", pkg)
		}
	}
	copies := strings.Join(commands[*instructions.CopyCommand](final.Commands, func(c *instructions.CopyCommand) []string {
		return append(slices.Clone(c.SourcePaths), c.DestPath)
	}), " ")
	for _, want := range []string{"/out/warren", "/out/envd", "/out/interpreter", "/out/runsc"} {
		if !strings.Contains(copies, want) {
			t.Errorf("runtime does not copy %s", want)
		}
	}
	ep := commands[*instructions.EntrypointCommand](final.Commands, func(e *instructions.EntrypointCommand) []string { return e.CmdLine })
	if !slices.Equal(ep, []string{"/usr/local/bin/warren"}) {
		t.Errorf("entrypoint %q", ep)
	}
}

// checkRunscPin: the runsc stage builds the version install-runsc.sh pins.
func checkRunscPin(t *testing.T, stage instructions.Stage) {
	t.Helper()
	pin, err := os.ReadFile("../scripts/install-runsc.sh")
	if err != nil {
		t.Fatal(err)
	}
	args := commands[*instructions.ArgCommand](stage.Commands, func(a *instructions.ArgCommand) []string {
		var kv []string
		for _, p := range a.Args {
			if p.Value != nil {
				kv = append(kv, *p.Value)
			}
		}
		return kv
	})
	if len(args) != 1 || !strings.Contains(string(pin), "VERSION="+args[0]+"\n") {
		t.Errorf("runsc version %v is not the one scripts/install-runsc.sh pins", args)
	}
}

// commands flattens what get returns for each command of type T.
func commands[T instructions.Command](cmds []instructions.Command, get func(T) []string) []string {
	var out []string
	for _, c := range cmds {
		if v, ok := c.(T); ok {
			out = append(out, get(v)...)
		}
	}
	return out
}
