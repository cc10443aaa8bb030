package warren

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/api/wire"
)

// TemplateBuilder describes a template step by step, as E2B's Template()
// builder does, for programs that would rather not write a Dockerfile:
//
//	t := warren.NewTemplate().FromImage("python:3.12-slim").
//		AptInstall("git").PipInstall("pandas").
//		Copy("app/", "/home/user/app/").SetWorkdir("/home/user/app")
//	ref, err := client.BuildTemplate(ctx, "data-app", t, warren.TemplateBuildOptions{Dir: "."})
//
// The steps become a Dockerfile that BuildDockerfile builds, so caching,
// COPY uploads and errors behave the same way. Steps are applied in order.
type TemplateBuilder struct {
	from         string // the Dockerfile's FROM image
	fromTemplate string // or a warren template, set on the spec
	lines        []string
	start, ready string
}

// NewTemplate starts an empty description; give it a base with FromImage
// or FromTemplate.
func NewTemplate() *TemplateBuilder { return &TemplateBuilder{} }

// FromImage bases the template on an image (a registry's or one imported
// with ImportImage).
func (t *TemplateBuilder) FromImage(ref string) *TemplateBuilder {
	t.from, t.fromTemplate = ref, ""
	return t
}

// FromTemplate bases the template on another template of the server,
// e.g. "base" or "code-interpreter-v1".
func (t *TemplateBuilder) FromTemplate(name string) *TemplateBuilder {
	t.from, t.fromTemplate = fromTemplatePlaceholder, name
	return t
}

// fromTemplatePlaceholder stands in the generated Dockerfile for a
// template base, which a Dockerfile cannot name; the spec then says it.
const fromTemplatePlaceholder = "warren-template-base"

// RunCmd runs a shell script (bash -c, as root) at build time.
func (t *TemplateBuilder) RunCmd(script string) *TemplateBuilder {
	return t.add("RUN", "/bin/bash", "-c", script)
}

// AptInstall installs Debian or Ubuntu packages.
func (t *TemplateBuilder) AptInstall(pkgs ...string) *TemplateBuilder {
	return t.RunCmd("apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends " +
		shellWords(pkgs) + " && rm -rf /var/lib/apt/lists/*")
}

// PipInstall installs Python packages.
func (t *TemplateBuilder) PipInstall(pkgs ...string) *TemplateBuilder {
	return t.RunCmd("pip install --no-cache-dir " + shellWords(pkgs))
}

// NpmInstall installs Node packages globally.
func (t *TemplateBuilder) NpmInstall(pkgs ...string) *TemplateBuilder {
	return t.RunCmd("npm install -g " + shellWords(pkgs))
}

// Copy copies a file or directory of the build context (Dir) into the
// template; a dest ending in "/" is a directory.
func (t *TemplateBuilder) Copy(src, dest string) *TemplateBuilder { return t.add("COPY", src, dest) }

// SetEnvs sets environment variables for the later steps and for the
// sandboxes' processes.
func (t *TemplateBuilder) SetEnvs(envs map[string]string) *TemplateBuilder {
	for _, k := range slices.Sorted(maps.Keys(envs)) {
		t.lines = append(t.lines, "ENV "+k+"="+dockerQuote(envs[k]))
	}
	return t
}

// SetWorkdir sets the directory of the later steps and the sandboxes'
// default working directory.
func (t *TemplateBuilder) SetWorkdir(dir string) *TemplateBuilder {
	t.lines = append(t.lines, "WORKDIR "+dockerQuote(dir))
	return t
}

// SetUser sets the user of the later steps and the sandboxes' default
// user.
func (t *TemplateBuilder) SetUser(user string) *TemplateBuilder {
	t.lines = append(t.lines, "USER "+user)
	return t
}

// SetStartCmd starts a process in every sandbox from the template (a
// server, say); ready, when set, is a shell command that must succeed
// before a create returns.
func (t *TemplateBuilder) SetStartCmd(start, ready string) *TemplateBuilder {
	t.start, t.ready = start, ready
	return t
}

// SetReadyCmd is a shell command that must succeed before a create from
// the template returns.
func (t *TemplateBuilder) SetReadyCmd(ready string) *TemplateBuilder {
	t.ready = ready
	return t
}

// add writes an instruction in its JSON (exec) form, which keeps any
// characters of its arguments as they are.
func (t *TemplateBuilder) add(instr string, args ...string) *TemplateBuilder {
	b, _ := json.Marshal(args)
	t.lines = append(t.lines, instr+" "+string(b))
	return t
}

// Dockerfile is the Dockerfile the description becomes.
func (t *TemplateBuilder) Dockerfile() string {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", t.from)
	for _, l := range t.lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// TemplateBuildOptions are a builder's build settings.
type TemplateBuildOptions struct {
	// Tags, NoCache, CPUCount, MemoryMB, OnLog and PollInterval are as
	// in DockerfileBuild.
	Tags               []string
	NoCache            bool
	CPUCount, MemoryMB int
	OnLog              func(BuildLogEntry)
	// Dir is the build context that Copy reads (default ".").
	Dir string
}

// BuildTemplate builds the template t describes under name ("name" or
// "name:tag") and waits for it, with the build's log.
// The builder is built through the Dockerfile converter, so the program
// must link it in: import _ "github.com/warren-sandbox/warren/pkg/warren/dockerfile".
func (c *Client) BuildTemplate(ctx context.Context, name string, t *TemplateBuilder, o TemplateBuildOptions) (*BuildRef, error) {
	b, err := t.dockerfileBuild(name, o)
	if err != nil {
		return nil, err
	}
	return c.buildDockerfile(ctx, b, t.complete)
}

// dockerfileBuild is the Dockerfile build of t under name: its Content is
// t.Dockerfile(). It fails when t has no base.
func (t *TemplateBuilder) dockerfileBuild(name string, o TemplateBuildOptions) (DockerfileBuild, error) {
	if t.from == "" {
		return DockerfileBuild{}, fmt.Errorf("building template %s: %w: no base (FromImage or FromTemplate)", name, ErrInvalid)
	}
	return DockerfileBuild{Name: name, Tags: o.Tags, Dir: o.Dir, Content: []byte(t.Dockerfile()), ReadyCmd: t.ready,
		NoCache: o.NoCache, CPUCount: o.CPUCount, MemoryMB: o.MemoryMB, OnLog: o.OnLog}, nil
}

// complete sets on spec, converted from t.Dockerfile(), what a Dockerfile
// cannot say: a template as the base and the start command.
func (t *TemplateBuilder) complete(spec *wire.BuildStart) {
	if t.fromTemplate != "" {
		spec.FromImage, spec.FromTemplate = "", t.fromTemplate
	}
	if t.start != "" {
		spec.StartCmd = t.start
	}
}

// shellWords quotes each word for bash.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// dockerQuote quotes a value for ENV and WORKDIR: Dockerfile double
// quotes, with the characters they treat specially escaped.
func dockerQuote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	return `"` + r.Replace(v) + `"`
}
