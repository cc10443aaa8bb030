package dockerfile

import (
	"path"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	"github.com/warren-sandbox/warren/api/wire"
)

// dispatch converts one instruction of the current stage.
func (c *converter) dispatch(cmd instructions.Command, line int) error {
	if ex, ok := cmd.(instructions.SupportsSingleWordExpansion); ok {
		// ENV commonly extends the image's variables (PATH=/x:$PATH), which
		// only the server knows, so leaving them is expected there.
		_, quiet := cmd.(*instructions.EnvCommand)
		if err := ex.Expand(c.expander(line, !quiet)); err != nil {
			return c.errorf(line, "%w", err)
		}
	}
	st := c.cur
	switch cmd := cmd.(type) {
	case *instructions.RunCommand:
		return c.run(cmd, line)
	case *instructions.CopyCommand:
		return c.copyCmd(cmd, line)
	case *instructions.AddCommand:
		return c.addCmd(cmd, line)
	case *instructions.ArgCommand:
		c.arg(cmd, line)
	case *instructions.EnvCommand:
		c.env(cmd, line)
	case *instructions.WorkdirCommand:
		st.cfg.workdir, st.cfg.workdirSet = workdirPath(st.cfg.workdir, cmd.Path), true
		st.addStep(wire.Step{Type: wire.StepWorkdir, Args: []string{st.cfg.workdir}, Line: line})
	case *instructions.UserCommand:
		st.cfg.user, st.cfg.userSet = cmd.User, true
		st.addStep(wire.Step{Type: wire.StepUser, Args: []string{cmd.User}, Line: line})
	case *instructions.LabelCommand:
		if st.cfg.labels == nil {
			st.cfg.labels = map[string]string{}
		}
		for _, kv := range cmd.Labels {
			st.cfg.labels[kv.Key] = kv.Value
		}
	case *instructions.ExposeCommand:
		return c.expose(cmd, line)
	case *instructions.CmdCommand:
		st.cfg.cmd, st.cmdSet = newCmdLine(cmd.ShellDependantCmdLine), true
	case *instructions.EntrypointCommand:
		st.cfg.entrypoint = newCmdLine(cmd.ShellDependantCmdLine)
		if !st.cmdSet {
			st.cfg.cmd = nil // Docker: a new ENTRYPOINT drops an inherited CMD
		}
	case *instructions.HealthCheckCommand:
		st.cfg.ready = readyCmd(cmd.Health.Test)
	case *instructions.MaintainerCommand:
		// BuildKit's linter already warns that it is deprecated.
	case *instructions.VolumeCommand, *instructions.StopSignalCommand:
		c.warnf(line, "%s is ignored: templates have no equivalent", strings.ToUpper(cmd.Name()))
	case *instructions.ShellCommand:
		return c.errorf(line, "SHELL is not supported: RUN always uses the sandbox's shell")
	case *instructions.OnbuildCommand:
		return c.errorf(line, "ONBUILD is not supported")
	default:
		return c.errorf(line, "unsupported instruction %s", strings.ToUpper(cmd.Name()))
	}
	return nil
}

// expander expands a word against the current stage. With warn it reports
// variables the Dockerfile never set, which stay as written.
func (c *converter) expander(line int, warn bool) instructions.SingleWordExpander {
	return func(word string) (string, error) {
		res, err := c.lex.ProcessWordWithMatches(word, c.cur)
		if err != nil {
			return "", err
		}
		if warn {
			for _, k := range sortedKeys(res.Unmatched) {
				c.warnf(line, "$%s is not set in the Dockerfile; left for the build to resolve", k)
			}
		}
		return res.Result, nil
	}
}

// env sets persistent variables: one ENV step holding every pair.
func (c *converter) env(cmd *instructions.EnvCommand, line int) {
	args := make([]string, 0, 2*len(cmd.Env))
	for _, kv := range cmd.Env {
		c.cur.cfg.env.set(kv.Key, kv.Value)
		args = append(args, kv.Key, kv.Value)
	}
	c.cur.addStep(wire.Step{Type: wire.StepEnv, Args: args, Line: line})
}

func (c *converter) expose(cmd *instructions.ExposeCommand, line int) error {
	for _, p := range cmd.Ports {
		words, err := c.lex.ProcessWords(p, c.cur)
		if err != nil {
			return c.errorf(line, "%w", err)
		}
		for _, w := range words {
			if !slices.Contains(c.cur.cfg.expose, w) {
				c.cur.cfg.expose = append(c.cur.cfg.expose, w)
			}
		}
	}
	return nil
}

// resolvePath makes p absolute against dir, as Docker resolves WORKDIR and
// COPY destinations. A path still holding an unresolved variable is left
// alone: only the server can tell what it will expand to.
func resolvePath(dir, p string) string {
	if path.IsAbs(p) || strings.Contains(p, "$") || strings.Contains(dir, "$") {
		return p
	}
	isDir := strings.HasSuffix(p, "/") || p == "." || strings.HasSuffix(p, "/.")
	out := path.Join(dir, p)
	if isDir && out != "/" {
		out += "/"
	}
	return out
}

// workdirPath is resolvePath without the trailing slash a directory may
// be written with.
func workdirPath(dir, p string) string {
	out := resolvePath(dir, p)
	if strings.Contains(out, "$") {
		return out
	}
	return path.Clean(out)
}
