package builder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/store"
)

// fsState is a stage's image so far: its layer stack with the cache key
// that names it, and the settings later steps run with.
type fsState struct {
	key     string
	layers  []string // top first
	env     map[string]string
	user    string
	workdir string
	cpu     int
	memory  int
	// startCmd and readyCmd are inherited from a template built on.
	startCmd string
	readyCmd string
}

func (s *fsState) clone() *fsState {
	c := *s
	c.layers = slices.Clone(s.layers)
	c.env = maps.Clone(s.env)
	return &c
}

// chain derives a child cache key from a parent key and a step.
func chain(parent string, parts ...any) string {
	h := sha256.New()
	h.Write([]byte(parent))
	for _, p := range parts {
		data, _ := json.Marshal(p)
		h.Write([]byte{0})
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// stageDef is a stage to build: an earlier one or the final.
type stageDef struct {
	name              string // "" for the final stage
	fromImage         string
	fromTemplate      string
	fromImageRegistry *wire.RegistryAuth
	fromStage         string
	steps             []wire.Step
}

// run builds every stage and returns the final one.
func (b *Builder) run(ctx context.Context, j *job, req *wire.BuildStart) (*fsState, error) {
	stages := map[string]*fsState{}
	force := req.Force
	for _, st := range req.Stages {
		res, err := b.stage(ctx, j, stageDef{st.Name, st.FromImage, st.FromTemplate, st.FromImageRegistry, st.FromStage, st.Steps}, stages, force)
		if err != nil {
			return nil, err
		}
		stages[st.Name] = res
	}
	return b.stage(ctx, j, stageDef{"", req.FromImage, req.FromTemplate, req.FromImageRegistry, req.FromStage, req.Steps}, stages, force)
}

// stage builds one stage's layers, reusing cached layers until a step
// changed (or force is set).
func (b *Builder) stage(ctx context.Context, j *job, def stageDef, stages map[string]*fsState, force bool) (*fsState, error) {
	label := func(i int) string { // the SDK's step numbering: 1 for the first step
		if def.name != "" {
			return ""
		}
		return fmt.Sprint(i + 1)
	}
	prefix := ""
	if def.name != "" {
		prefix = "stage " + def.name + ": "
	}
	st, err := b.base(ctx, j, def, stages)
	if err != nil {
		return nil, &stepError{step: map[bool]string{true: "base"}[def.name == ""], err: fmt.Errorf("%s%w", prefix, err)}
	}
	for i, step := range def.steps {
		if err := ctx.Err(); err != nil {
			return nil, &stepError{step: label(i), err: fmt.Errorf("the build was cancelled")}
		}
		force = force || step.Force
		start := time.Now()
		j.log.Infof(label(i), "%s[%d/%d] %s", prefix, i+1, len(def.steps), describe(step))
		next, cached, err := b.step(ctx, j, st, step, stages, force, label(i))
		if err != nil {
			where := fmt.Sprintf("step %d (%s)", i+1, describe(step))
			if step.Line > 0 {
				where = fmt.Sprintf("Dockerfile:%d: %s", step.Line, describe(step))
			}
			return nil, &stepError{step: label(i), err: fmt.Errorf("%s%s: %w", prefix, where, err)}
		}
		if cached {
			j.log.Infof(label(i), "CACHED")
		} else if step.Type == wire.StepRun || step.Type == wire.StepCopy {
			j.log.Infof(label(i), "done in %s", time.Since(start).Round(time.Millisecond))
		}
		st = next
	}
	return st, nil
}

func describe(s wire.Step) string {
	args := strings.Join(s.Args, " ")
	if s.Type == wire.StepCopy && len(s.Args) >= 2 {
		args = s.Args[0] + " " + s.Args[1]
		if s.FromStage != "" {
			args = "--from=" + s.FromStage + " " + args
		}
	}
	if len(args) > 200 {
		args = args[:200] + "…"
	}
	return s.Type + " " + args
}

// step applies one step to st. Steps that change files produce a layer,
// looked up in the cache by the chained key first.
func (b *Builder) step(ctx context.Context, j *job, st *fsState, s wire.Step, stages map[string]*fsState, force bool, label string) (*fsState, bool, error) {
	next := st.clone()
	switch s.Type {
	case wire.StepEnv:
		for i := 0; i+1 < len(s.Args); i += 2 {
			next.env[s.Args[i]] = s.Args[i+1]
		}
		next.key = chain(st.key, s.Type, s.Args)
		return next, false, nil
	case wire.StepUser:
		next.user = s.Args[0]
		next.key = chain(st.key, s.Type, s.Args)
		return next, false, nil
	case wire.StepWorkdir:
		next.workdir = path.Clean(s.Args[0])
		if !path.IsAbs(next.workdir) {
			next.workdir = path.Join(st.workdirOrRoot(), s.Args[0])
		}
		return b.layerStep(ctx, next, chain(st.key, s.Type, next.workdir, st.user), force, func(dir string) error {
			return b.makeWorkdir(st, next.workdir, dir)
		})
	case wire.StepRun:
		return b.layerStep(ctx, next, chain(st.key, s.Type, s.Args, s.Env), force, func(dir string) error {
			return b.runStep(ctx, j, st, s, dir, label)
		})
	case wire.StepCopy:
		src, err := b.copySource(j.team, s, stages)
		if err != nil {
			return nil, false, err
		}
		return b.layerStep(ctx, next, chain(st.key, s.Type, s.Args, src.key, s.Extract), force, func(dir string) error {
			return b.copyStep(ctx, st, s, src, dir)
		})
	}
	return nil, false, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("unknown step type %q", s.Type))
}

func (s *fsState) workdirOrRoot() string {
	if s.workdir == "" {
		return "/"
	}
	return s.workdir
}

// layerStep finds the layer for key in the cache or makes it with fill,
// and puts it on top of next's stack (unless it is empty).
func (b *Builder) layerStep(ctx context.Context, next *fsState, key string, force bool, fill func(dir string) error) (*fsState, bool, error) {
	next.key = key
	cached := !force && b.opts.Layers.Has(key)
	var dir string
	if cached {
		dir = b.opts.Layers.Path(key)
	} else {
		if force && b.opts.Layers.Has(key) {
			// Rebuild under a key of its own: the cached layer may be in
			// use by templates and sandboxes.
			key = chain(key, "force", time.Now().UnixNano())
			next.key = key
		}
		var err error
		if dir, err = b.opts.Layers.Create(ctx, key, fill); err != nil {
			return nil, false, err
		}
	}
	if !emptyDir(dir) {
		next.layers = append([]string{dir}, next.layers...)
	}
	if err := checkStack(next.layers); err != nil {
		return nil, false, err
	}
	return next, cached, nil
}

func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

// maxTemplateLayers leaves room above a template's layers for the layers
// snapshots of its sandboxes add.
const maxTemplateLayers = overlay.MaxLayers - 32

// checkStack refuses stacks that one overlay mount cannot hold. Snapshots
// of a sandbox add a layer each on top, so a template leaves room for them.
func checkStack(layers []string) error {
	if len(layers) > maxTemplateLayers {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("the image has too many layers (%d, at most %d): combine RUN and COPY steps", len(layers), maxTemplateLayers))
	}
	return nil
}

// runStep runs a RUN step in a build sandbox; its writable layer becomes dir.
func (b *Builder) runStep(ctx context.Context, j *job, st *fsState, s wire.Step, dir string, label string) error {
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("preparing layer dir: %w", err)
	}
	env := maps.Clone(st.env)
	maps.Copy(env, s.Env)
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	user := st.user
	if len(s.Args) > 1 && s.Args[1] != "" {
		user = s.Args[1]
	}
	out := j.log.writer(label)
	first := j.log.Len()
	code, err := b.opts.Runner.RunBuildStep(ctx, RunStep{
		Layers: st.layers, Env: env, User: user, Workdir: st.workdirOrRoot(),
		Shell: b.shell(st), Command: s.Args[0], CPUCount: st.cpu, MemoryMB: st.memory,
		AllowInternet: b.opts.AllowInternet, Output: out, LayerDir: dir,
	})
	out.Flush()
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("the command exited with code %d; last output:\n%s", code, strings.TrimRight(lastLines(j.log.Since(first, 15)), "\n"))
	}
	return nil
}

// shell is bash where the image has it (what SDK users write for), else sh.
func (b *Builder) shell(st *fsState) []string {
	v, err := openView(b.opts.WorkDir, st.layers)
	if err != nil {
		return []string{"/bin/sh", "-c"}
	}
	defer v.close()
	if fi, err := v.stat("/bin/bash"); err == nil && fi.Mode().IsRegular() {
		return []string{"/bin/bash", "-c"}
	}
	return []string{"/bin/sh", "-c"}
}

// finish records a successful build: its result, the template's current
// build and its tags.
func (b *Builder) finish(ctx context.Context, bl *store.Build, req *wire.BuildStart, st *fsState) error {
	tpl, err := b.opts.Store.GetTemplate(ctx, bl.TemplateID)
	if err != nil {
		return fmt.Errorf("the template was deleted during the build: %w", err)
	}
	bl.Status, bl.Layers, bl.Env = store.BuildReady, st.layers, st.env
	bl.User, bl.Workdir, bl.StartCmd, bl.ReadyCmd = st.user, st.workdir, req.StartCmd, req.ReadyCmd
	if req.StartCmd == "" {
		// A template built on another keeps its start command (the code
		// interpreter's server, say) unless it sets its own.
		bl.StartCmd, bl.ReadyCmd = st.startCmd, st.readyCmd
	}
	bl.Labels = req.Labels
	if bl.CPUCount == 0 {
		bl.CPUCount = tpl.CPUCount
	}
	if bl.MemoryMB == 0 {
		bl.MemoryMB = tpl.MemoryMB
	}
	for _, l := range st.layers {
		bl.SizeBytes += dirBytes(l)
	}
	applyBuild(tpl, bl)
	if err := b.opts.Store.PutTemplate(ctx, tpl); err != nil {
		return fmt.Errorf("recording template: %w", err)
	}
	for _, tag := range append([]string{"latest"}, bl.Tags...) {
		if err := b.opts.Store.SetTag(ctx, tpl.ID, tag, bl.ID); err != nil {
			return fmt.Errorf("tagging build %s: %w", tag, err)
		}
	}
	return b.opts.Store.UpdateBuild(ctx, bl)
}
