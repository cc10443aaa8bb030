package dockerfile

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	"github.com/warren-sandbox/warren/api/wire"
)

// stage is one FROM section while it is being converted.
type stage struct {
	index int
	name  string // the AS name, or the index for an unnamed stage
	named bool
	line  int // of the FROM
	out   wire.Stage
	// args are this stage's ARGs that have a value; unlike ENV they are
	// neither inherited by child stages nor stored in the template.
	args *vars
	// unset are ARG names in sight without a value: global ARGs the stage
	// did not redeclare and value-less ARGs. Docker expands them to "",
	// unlike names the Dockerfile never mentions, which may be the image's.
	unset  map[string]bool
	cfg    config
	cmdSet bool // CMD seen in this stage, so a later ENTRYPOINT keeps it
}

// config is what a stage passes on to a stage built FROM it, like the image
// config Docker carries: environment, user, directory and metadata.
type config struct {
	env        *vars
	workdir    string
	user       string
	workdirSet bool
	userSet    bool
	labels     map[string]string
	expose     []string
	entrypoint *cmdLine
	cmd        *cmdLine
	ready      string
}

func (c config) clone() config {
	c.env = c.env.clone()
	c.labels = maps.Clone(c.labels)
	c.expose = slices.Clone(c.expose)
	return c
}

func (s *stage) addStep(step wire.Step) { s.out.Steps = append(s.out.Steps, step) }

// Get resolves a variable for expansion: ENV wins over ARG, as in Docker.
func (s *stage) Get(key string) (string, bool) {
	if v, ok := s.cfg.env.Get(key); ok {
		return v, true
	}
	if v, ok := s.args.Get(key); ok {
		return v, true
	}
	return "", s.unset[key]
}

// Keys lists the variables Get knows.
func (s *stage) Keys() []string {
	keys := s.cfg.env.Keys()
	for _, k := range s.args.Keys() {
		if _, ok := s.cfg.env.Get(k); !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// runEnv is the environment ARGs add to a RUN: the ones not overridden by
// an ENV of the same name.
func (s *stage) runEnv() map[string]string {
	var env map[string]string
	for _, k := range s.args.Keys() {
		if _, ok := s.cfg.env.Get(k); ok {
			continue
		}
		if env == nil {
			env = map[string]string{}
		}
		env[k], _ = s.args.Get(k)
	}
	return env
}

func (c *converter) from(s *instructions.Stage, line int) error {
	if c.cur != nil {
		c.earlier = append(c.earlier, c.cur.out)
		c.cur = nil
	}
	base, err := c.expandFrom(s.BaseName, line)
	if err != nil {
		return err
	}
	if s.Platform != "" {
		c.warnf(line, "FROM --platform is ignored: the server builds for its own platform")
	}
	st := &stage{index: len(c.stages), name: s.Name, named: s.Name != "", line: line, args: newVars(), unset: map[string]bool{}}
	for k := range c.globalNames {
		st.unset[k] = true
	}
	if !st.named {
		st.name = strconv.Itoa(st.index)
	} else if c.stageNamed(st.name) != nil {
		return c.errorf(line, "duplicate stage name %q", st.name)
	}
	st.out.Name = st.name
	switch parent := c.stageNamed(base); {
	case base == "":
		return c.errorf(line, "FROM needs a base image")
	case parent != nil:
		st.out.FromStage = parent.name
		st.cfg = parent.cfg.clone()
	case strings.EqualFold(base, "scratch"):
		return c.errorf(line, "FROM scratch is not supported: a template needs a base image with a shell")
	default:
		st.out.FromImage = base
		// As the SDK's parseDockerfile: Docker runs steps as root in /,
		// whatever the sandbox default is.
		st.cfg = config{env: newVars(), user: "root", workdir: "/"}
		st.addStep(wire.Step{Type: wire.StepUser, Args: []string{"root"}, Line: line})
		st.addStep(wire.Step{Type: wire.StepWorkdir, Args: []string{"/"}, Line: line})
	}
	c.stages = append(c.stages, st)
	c.cur = st
	return nil
}

// stageNamed finds an earlier stage by its AS name (case-insensitive, as
// BuildKit compares them).
func (c *converter) stageNamed(name string) *stage {
	for _, st := range c.stages {
		if st.named && strings.EqualFold(st.name, name) && st != c.cur {
			return st
		}
	}
	return nil
}

func (c *converter) expandFrom(word string, line int) (string, error) {
	res, err := c.fromLex.ProcessWordWithMatches(word, c.globals)
	if err != nil {
		return "", c.errorf(line, "%w", err)
	}
	for _, k := range sortedKeys(res.Unmatched) {
		c.warnf(line, "ARG %s is not set before the first FROM; it expands to an empty string", k)
	}
	return res.Result, nil
}

// globalArg handles an ARG before the first FROM: usable in FROM lines and
// as the default of a same-named ARG inside a stage.
func (c *converter) globalArg(cmd *instructions.ArgCommand, line int) error {
	for _, kv := range cmd.Args {
		c.globalNames[kv.Key] = true
		if v, ok := c.opts.BuildArgs[kv.Key]; ok {
			c.usedArgs[kv.Key] = true
			c.globals.set(kv.Key, v)
			continue
		}
		if kv.Value == nil {
			continue
		}
		v, err := c.expandFrom(*kv.Value, line)
		if err != nil {
			return err
		}
		c.globals.set(kv.Key, v)
	}
	return nil
}

// arg declares stage ARGs. The value is a --build-arg, else the default,
// else the global ARG of that name; without any the ARG stays unset.
func (c *converter) arg(cmd *instructions.ArgCommand, line int) {
	for _, kv := range cmd.Args {
		if v, ok := c.opts.BuildArgs[kv.Key]; ok {
			c.usedArgs[kv.Key] = true
			c.cur.args.set(kv.Key, v)
			continue
		}
		if kv.Value != nil {
			c.cur.args.set(kv.Key, *kv.Value)
			continue
		}
		if v, ok := c.globals.Get(kv.Key); ok {
			c.cur.args.set(kv.Key, v)
			continue
		}
		c.cur.unset[kv.Key] = true
		if platformArgs[kv.Key] {
			c.warnf(line, "ARG %s is set automatically by Docker but not by warren; pass --build-arg %s=...", kv.Key, kv.Key)
		}
	}
}

// platformArgs are the ARGs BuildKit fills in itself. The CLI cannot know
// the server's platform, so it does not guess.
var platformArgs = map[string]bool{
	"TARGETPLATFORM": true, "TARGETOS": true, "TARGETARCH": true, "TARGETVARIANT": true,
	"BUILDPLATFORM": true, "BUILDOS": true, "BUILDARCH": true, "BUILDVARIANT": true,
}

// vars is an ordered variable set usable as shell.EnvGetter.
type vars struct {
	keys []string
	m    map[string]string
}

func newVars() *vars { return &vars{m: map[string]string{}} }

func (v *vars) Get(key string) (string, bool) {
	val, ok := v.m[key]
	return val, ok
}

func (v *vars) Keys() []string { return slices.Clone(v.keys) }

func (v *vars) set(key, val string) {
	if _, ok := v.m[key]; !ok {
		v.keys = append(v.keys, key)
	}
	v.m[key] = val
}

func (v *vars) clone() *vars {
	return &vars{keys: slices.Clone(v.keys), m: maps.Clone(v.m)}
}

func sortedKeys(m map[string]struct{}) []string {
	return slices.Sorted(maps.Keys(m))
}
