package dockerfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/warren-sandbox/warren/api/wire"
)

func (c *converter) run(cmd *instructions.RunCommand, line int) error {
	if err := c.runFlags(cmd, line); err != nil {
		return err
	}
	script := runScript(cmd.ShellDependantCmdLine)
	if strings.TrimSpace(script) == "" {
		return c.errorf(line, "RUN needs a command")
	}
	c.cur.addStep(wire.Step{Type: wire.StepRun, Args: []string{script}, Env: c.cur.runEnv(), Line: line})
	return nil
}

// runFlags accepts the RUN flags whose absence changes only speed or
// isolation, and rejects the ones a step depends on for its inputs.
func (c *converter) runFlags(cmd *instructions.RunCommand, line int) error {
	for _, m := range instructions.GetMounts(cmd) {
		switch m.Type {
		case instructions.MountTypeCache, instructions.MountTypeTmpfs:
			c.warnf(line, "RUN --mount=type=%s is ignored: the step runs without it", m.Type)
		default:
			return c.errorf(line, "RUN --mount=type=%s is not supported", m.Type)
		}
	}
	used := cmd.FlagsUsed
	slices.Sort(used)
	for _, f := range used {
		switch f {
		case "mount":
		case "network", "security", "device":
			c.warnf(line, "RUN --%s is ignored", f)
		default:
			return c.errorf(line, "RUN --%s is not supported", f)
		}
	}
	return nil
}

// runScript is the shell command for a RUN: shell form as written (the
// parser has joined continuation lines), exec form quoted for the shell,
// and heredocs reassembled the way BuildKit runs them.
func runScript(cl instructions.ShellDependantCmdLine) string {
	if !cl.PrependShell {
		return shellJoin(cl.CmdLine)
	}
	script := strings.Join(cl.CmdLine, " ")
	if len(cl.Files) == 0 {
		return script
	}
	if h := parser.MustParseHeredoc(script); h != nil {
		// "RUN <<EOF" alone runs the document itself.
		data := cl.Files[0].Data
		if cl.Files[0].Chomp {
			data = parser.ChompHeredocContent(data)
		}
		if strings.HasPrefix(data, "#!") {
			return shebangScript(data)
		}
		return data
	}
	var b strings.Builder
	b.WriteString(script)
	for _, f := range cl.Files {
		b.WriteString("\n" + f.Data + f.Name)
	}
	return b.String()
}

// shebangScript runs a heredoc that names its own interpreter, which
// BuildKit does by executing it as a file.
func shebangScript(data string) string {
	delim := "WARREN_HEREDOC"
	for strings.Contains(data, delim) {
		delim += "_"
	}
	if !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	return fmt.Sprintf("f=$(mktemp) && cat > \"$f\" <<'%s'\n%s%s\nchmod +x \"$f\" && \"$f\"; rc=$?; rm -f \"$f\"; exit $rc", delim, data, delim)
}

// cmdLine is a CMD or ENTRYPOINT: exec-form argv, or one shell string.
type cmdLine struct {
	args  []string
	shell bool
}

func newCmdLine(cl instructions.ShellDependantCmdLine) *cmdLine {
	if len(cl.CmdLine) == 0 {
		return nil
	}
	return &cmdLine{args: cl.CmdLine, shell: cl.PrependShell}
}

// argv is the command Docker would exec.
func (c *cmdLine) argv() []string {
	if c.shell {
		return []string{"/bin/sh", "-c", c.args[0]}
	}
	return c.args
}

// startCmd is the template's start command: Docker's ENTRYPOINT + CMD as
// one shell command line. Shell forms stay as written, since the server
// runs the start command through a shell anyway.
func startCmd(entrypoint, cmd *cmdLine) string {
	switch {
	case entrypoint != nil && entrypoint.shell:
		return entrypoint.args[0] // Docker ignores CMD here
	case entrypoint != nil && cmd != nil:
		return shellJoin(append(slices.Clone(entrypoint.args), cmd.argv()...))
	case entrypoint != nil:
		return shellJoin(entrypoint.args)
	case cmd != nil && cmd.shell:
		return cmd.args[0]
	case cmd != nil:
		return shellJoin(cmd.args)
	}
	return ""
}

// readyCmd turns a HEALTHCHECK test into the command the server polls
// until the sandbox is ready.
func readyCmd(test []string) string {
	if len(test) < 2 {
		return "" // NONE
	}
	if test[0] == "CMD-SHELL" {
		return test[1]
	}
	return shellJoin(test[1:])
}

// shellJoin quotes argv for a POSIX shell.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
