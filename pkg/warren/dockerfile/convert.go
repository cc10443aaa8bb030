// Package dockerfile turns a Dockerfile and its build context into
// warren's build spec: the wire.BuildStart that StartBuild sends, the same
// request E2B's SDK makes plus warren's extensions (stages, COPY --from,
// build args for RUN, labels, ports). It reads the Dockerfile with
// BuildKit's own parser. COPY sources are read from a build Context, which
// applies .dockerignore and lists, hashes and tars the sources exactly as
// the SDK does, so uploads are shared with SDK-built templates.
//
// warren.Client.BuildDockerfile (and so `warren template build`) runs the
// whole build with it; use this package directly to inspect or adjust the
// spec before starting a build yourself:
//
//	bctx, err := dockerfile.NewContext(dir)
//	...
//	defer bctx.Close()
//	spec, warnings, err := dockerfile.Convert(src, dockerfile.Options{Context: bctx})
//
// The conversion follows the SDK's parseDockerfile where the SDK has a
// convention (the final stage starts as root in / and ends as "user" in
// /home/user unless the Dockerfile says otherwise) and Docker's semantics
// everywhere else. Anything the server cannot reproduce faithfully is an
// error naming the Dockerfile line, never a silent approximation; what only
// carries metadata (VOLUME, STOPSIGNAL) is dropped with a warning.
package dockerfile

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"

	"github.com/warren-sandbox/warren/api/wire"
)

// Options are the inputs of a conversion besides the Dockerfile.
type Options struct {
	// BuildArgs are --build-arg values; they override ARG defaults.
	BuildArgs map[string]string
	// Context is the build context COPY and ADD read from. It may be nil
	// when the Dockerfile copies nothing from it.
	Context *Context
	// Target names the stage to build (docker build --target); the
	// stages after it are left out. "" builds the last stage.
	Target string
}

// Error is a conversion error tied to a Dockerfile line.
type Error struct {
	Line int
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("Dockerfile:%d: %v", e.Line, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// Convert turns a Dockerfile into a build request. Warnings are for
// instructions that were ignored or values left for the server to resolve;
// each starts with "Dockerfile:<line>:".
func Convert(dockerfile []byte, opts Options) (*wire.BuildStart, []string, error) {
	res, err := parser.Parse(bytes.NewReader(dockerfile))
	if err != nil {
		return nil, nil, &Error{Line: errorLine(err), Err: unwrapLocation(err)}
	}
	c := newConverter(opts, res.EscapeToken)
	c.allNames = stageNames(res.AST)
	for _, w := range res.Warnings {
		line := 0
		if w.Location != nil {
			line = w.Location.Start.Line
		}
		c.warnf(line, "%s", w.Short)
	}
	for _, n := range res.AST.Children {
		if c.reachedTarget(n) {
			break
		}
		if err := c.node(n); err != nil {
			return nil, nil, err
		}
	}
	if t := opts.Target; t != "" && (c.cur == nil || !c.cur.named || !strings.EqualFold(c.cur.name, t)) {
		return nil, nil, fmt.Errorf("target stage %q is not in the Dockerfile (no FROM ... AS %s)", t, t)
	}
	req, err := c.finish()
	if err != nil {
		return nil, nil, err
	}
	return req, c.warnings, nil
}

// reachedTarget reports whether n starts the stage after the target one.
func (c *converter) reachedTarget(n *parser.Node) bool {
	return c.opts.Target != "" && strings.EqualFold(n.Value, "from") &&
		c.cur != nil && c.cur.named && strings.EqualFold(c.cur.name, c.opts.Target)
}

// stageNames collects the AS names of all FROM lines ahead of conversion.
func stageNames(ast *parser.Node) map[string]bool {
	names := map[string]bool{}
	for _, n := range ast.Children {
		if !strings.EqualFold(n.Value, "from") {
			continue
		}
		var args []string
		for a := n.Next; a != nil; a = a.Next {
			args = append(args, a.Value)
		}
		if len(args) == 3 && strings.EqualFold(args[1], "as") {
			names[strings.ToLower(args[2])] = true
		}
	}
	return names
}

// errorLine digs the line out of a BuildKit parser error.
func errorLine(err error) int {
	var le *parser.LocationError
	if errors.As(err, &le) && len(le.Locations) > 0 && len(le.Locations[0]) > 0 {
		if l := le.Locations[0][0].Start.Line; l > 0 {
			return l
		}
	}
	return 1
}

type converter struct {
	opts Options
	// lex expands words, leaving variables the Dockerfile never set (such
	// as the base image's $PATH) as written for the server to resolve.
	lex *shell.Lex
	// fromLex expands FROM, where only global ARGs exist and an unset one
	// must become empty as in Docker.
	fromLex *shell.Lex
	lint    *linter.Linter
	globals *vars
	// globalNames are all ARGs declared before the first FROM.
	globalNames map[string]bool
	usedArgs    map[string]bool
	stages      []*stage
	// earlier collects finished non-final stages and the implicit stages of
	// COPY --from=<image>, in the order the server must build them.
	earlier []wire.Stage
	// implicit maps an image of COPY --from to the name of its stage.
	implicit map[string]string
	// allNames are the AS names of every stage in the file, to tell a
	// reference to a later stage from an image name.
	allNames map[string]bool
	cur      *stage
	warnings []string
	warned   map[string]bool
}

func newConverter(opts Options, escape rune) *converter {
	c := &converter{
		opts:        opts,
		lex:         shell.NewLex(escape),
		fromLex:     shell.NewLex(escape),
		globals:     newVars(),
		globalNames: map[string]bool{},
		usedArgs:    map[string]bool{},
		implicit:    map[string]string{},
		warned:      map[string]bool{},
	}
	c.lex.SkipUnsetEnv = true
	c.lint = linter.New(&linter.Config{Warn: func(rule, desc, url, msg string, loc []parser.Range) {
		line := 0
		if len(loc) > 0 {
			line = loc[0].Start.Line
		}
		c.warnf(line, "%s", msg)
	}})
	return c
}

func (c *converter) node(n *parser.Node) error {
	line := n.StartLine
	v, err := instructions.ParseInstructionWithLinter(n, c.lint)
	if err != nil {
		return &Error{Line: line, Err: unwrapLocation(err)}
	}
	switch v := v.(type) {
	case *instructions.Stage:
		return c.from(v, line)
	case *instructions.ArgCommand:
		if c.cur == nil {
			return c.globalArg(v, line)
		}
	}
	if c.cur == nil {
		return c.errorf(line, "%s before the first FROM", strings.ToUpper(n.Value))
	}
	cmd, ok := v.(instructions.Command)
	if !ok {
		return c.errorf(line, "unsupported instruction %s", strings.ToUpper(n.Value))
	}
	return c.dispatch(cmd, line)
}

// unwrapLocation drops BuildKit's location wrapper, whose line we print
// ourselves.
func unwrapLocation(err error) error {
	var le *parser.LocationError
	if errors.As(err, &le) && le.Unwrap() != nil {
		return le.Unwrap()
	}
	return err
}

func (c *converter) errorf(line int, format string, args ...any) error {
	return &Error{Line: line, Err: fmt.Errorf(format, args...)}
}

func (c *converter) warnf(line int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("Dockerfile:%d: %s", line, msg)
	}
	if c.warned[msg] {
		return
	}
	c.warned[msg] = true
	c.warnings = append(c.warnings, msg)
}

// finish closes the final stage and assembles the request.
func (c *converter) finish() (*wire.BuildStart, error) {
	if c.cur == nil {
		return nil, &Error{Line: 1, Err: errors.New("no FROM instruction")}
	}
	final := c.cur
	if !final.cfg.userSet {
		final.addStep(wire.Step{Type: wire.StepUser, Args: []string{"user"}, Line: final.line})
	}
	if !final.cfg.workdirSet {
		final.addStep(wire.Step{Type: wire.StepWorkdir, Args: []string{"/home/user"}, Line: final.line})
	}
	req := &wire.BuildStart{
		FromImage: final.out.FromImage,
		FromStage: final.out.FromStage,
		Steps:     final.out.Steps,
		StartCmd:  startCmd(final.cfg.entrypoint, final.cfg.cmd),
		ReadyCmd:  final.cfg.ready,
		Expose:    final.cfg.expose,
	}
	if len(final.cfg.labels) > 0 {
		req.Labels = final.cfg.labels
	}
	req.Stages = neededStages(c.earlier, req)
	// "steps" has no omitempty: send [] rather than null.
	if req.Steps == nil {
		req.Steps = []wire.Step{}
	}
	for i := range req.Stages {
		if req.Stages[i].Steps == nil {
			req.Stages[i].Steps = []wire.Step{}
		}
	}
	c.warnUnusedArgs()
	return req, nil
}

// neededStages keeps the earlier stages the final one depends on, as
// BuildKit builds only those: a Dockerfile may hold stages for other
// targets that must not slow down or break this build.
func neededStages(all []wire.Stage, req *wire.BuildStart) []wire.Stage {
	byName := make(map[string]*wire.Stage, len(all))
	for i := range all {
		byName[all[i].Name] = &all[i]
	}
	need := map[string]bool{}
	var visit func(from string, steps []wire.Step)
	visit = func(from string, steps []wire.Step) {
		refs := []string{from}
		for _, s := range steps {
			refs = append(refs, s.FromStage)
		}
		for _, r := range refs {
			if st := byName[r]; r != "" && st != nil && !need[r] {
				need[r] = true
				visit(st.FromStage, st.Steps)
			}
		}
	}
	visit(req.FromStage, req.Steps)
	var out []wire.Stage
	for _, st := range all {
		if need[st.Name] {
			out = append(out, st)
		}
	}
	return out
}

func (c *converter) warnUnusedArgs() {
	var unused []string
	for k := range c.opts.BuildArgs {
		if !c.usedArgs[k] {
			unused = append(unused, k)
		}
	}
	sort.Strings(unused)
	for _, k := range unused {
		c.warnf(0, "build arg %s was not consumed by any ARG", k)
	}
}
