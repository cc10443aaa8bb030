package dockerfile

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	"github.com/warren-sandbox/warren/api/wire"
)

// copySpec is what COPY and ADD share once their own flags are checked.
type copySpec struct {
	name   string // "COPY" or "ADD", for messages
	srcs   []string
	dest   string
	chown  string
	chmod  string
	from   string
	unpack bool // ADD: unpack local tar archives
}

func (c *converter) copyCmd(cmd *instructions.CopyCommand, line int) error {
	switch {
	case len(cmd.SourceContents) > 0:
		return c.errorf(line, "COPY from a heredoc is not supported")
	case len(cmd.ExcludePatterns) > 0:
		return c.errorf(line, "COPY --exclude is not supported")
	case cmd.Parents:
		return c.errorf(line, "COPY --parents is not supported")
	}
	from, err := c.expander(line, true)(cmd.From)
	if err != nil {
		return c.errorf(line, "%w", err)
	}
	return c.copySteps(copySpec{
		name: "COPY", srcs: cmd.SourcePaths, dest: cmd.DestPath,
		chown: cmd.Chown, chmod: cmd.Chmod, from: from,
	}, line)
}

func (c *converter) addCmd(cmd *instructions.AddCommand, line int) error {
	switch {
	case len(cmd.SourceContents) > 0:
		return c.errorf(line, "ADD from a heredoc is not supported")
	case len(cmd.ExcludePatterns) > 0:
		return c.errorf(line, "ADD --exclude is not supported")
	}
	urls := 0
	for _, src := range cmd.SourcePaths {
		switch {
		case isGit(src):
			return c.errorf(line, "ADD %s: adding a git repository is not supported; clone it in a RUN step", src)
		case isRemote(src):
			urls++
		}
	}
	if cmd.KeepGitDir != nil || (cmd.Checksum != "" && urls == 0) {
		return c.errorf(line, "ADD --checksum and --keep-git-dir apply only to URLs and git sources")
	}
	if len(cmd.SourcePaths) > 1 && !strings.HasSuffix(cmd.DestPath, "/") {
		return c.errorf(line, "ADD with more than one source needs a destination directory ending in /")
	}
	sp := copySpec{name: "ADD", dest: cmd.DestPath, chown: cmd.Chown, chmod: cmd.Chmod}
	for _, src := range cmd.SourcePaths {
		one := sp
		one.srcs, one.unpack = []string{src}, cmd.Unpack == nil || *cmd.Unpack
		if isRemote(src) {
			rel, err := c.download(src, cmd.DestPath, cmd.Checksum, line)
			if err != nil {
				return err
			}
			// Docker never unpacks what it downloads.
			one.srcs, one.unpack = []string{rel}, false
		}
		if err := c.copySteps(one, line); err != nil {
			return err
		}
	}
	return nil
}

// download fetches ADD's URL into the build context (see Context.Download).
func (c *converter) download(src, dest, checksum string, line int) (string, error) {
	if c.opts.Context == nil {
		return "", c.errorf(line, "ADD %s needs a build context", src)
	}
	rel, err := c.opts.Context.Download(context.Background(), src, dest, checksum)
	if err != nil {
		return "", c.errorf(line, "ADD %s: %w", src, err)
	}
	return rel, nil
}

// isRemote tells URLs and git references from local paths.
func isRemote(src string) bool {
	return strings.Contains(src, "://") || strings.HasPrefix(src, "git@")
}

// isGit tells git references, which ADD may also take, from plain URLs.
func isGit(src string) bool {
	return strings.HasPrefix(src, "git@") || strings.HasPrefix(src, "git://") ||
		strings.HasSuffix(strings.SplitN(src, "#", 2)[0], ".git")
}

// copySteps emits one COPY step per source, as the SDK does.
func (c *converter) copySteps(sp copySpec, line int) error {
	if len(sp.srcs) > 1 && !strings.HasSuffix(sp.dest, "/") {
		return c.errorf(line, "%s with more than one source needs a destination directory ending in /", sp.name)
	}
	mode, err := octalMode(sp.chmod)
	if err != nil {
		return c.errorf(line, "%w", err)
	}
	owner := sp.chown
	if owner == "" {
		owner = "root" // Docker copies as root unless told otherwise
	}
	dest := resolvePath(c.cur.cfg.workdir, sp.dest)
	stageRef := ""
	if sp.from != "" {
		if stageRef, err = c.fromRef(sp.from, line); err != nil {
			return err
		}
	}
	for _, src := range sp.srcs {
		step := wire.Step{Type: wire.StepCopy, Args: []string{src, dest, owner, mode}, Line: line}
		if stageRef != "" {
			step.FromStage = stageRef
			step.Args[0] = rootedPath(src)
		} else if err := c.contextSource(&step, sp, line); err != nil {
			return err
		}
		c.cur.addStep(step)
	}
	return nil
}

// contextSource fills in what a COPY from the build context needs: the
// files' hash and, for ADD of a tarball, Extract.
func (c *converter) contextSource(step *wire.Step, sp copySpec, line int) error {
	src, dest := step.Args[0], step.Args[1]
	if err := validateSource(src); err != nil {
		return c.errorf(line, "%w", err)
	}
	bctx := c.opts.Context
	if bctx == nil {
		return c.errorf(line, "%s %s needs a build context", sp.name, src)
	}
	if sp.unpack {
		kind, err := bctx.archiveKind(src)
		if err != nil {
			return c.errorf(line, "ADD %s: %w", src, err)
		}
		step.Extract = kind != notArchive
	}
	hash, err := bctx.Hash(src, dest)
	if err != nil {
		return c.errorf(line, "%s %s: %w", sp.name, src, err)
	}
	step.FilesHash = hash
	return nil
}

// rootedPath makes a COPY --from source absolute: Docker reads a relative
// one from the root of the other stage, not from its WORKDIR.
func rootedPath(src string) string {
	if path.IsAbs(src) {
		return src
	}
	out := path.Join("/", src)
	if strings.HasSuffix(src, "/") && out != "/" {
		out += "/"
	}
	return out
}

// fromRef resolves COPY --from: an earlier stage by name or index, or else
// an image, which becomes an implicit stage with no steps.
func (c *converter) fromRef(from string, line int) (string, error) {
	if st := c.stageNamed(from); st != nil {
		return st.name, nil
	}
	if i, err := strconv.Atoi(from); err == nil {
		if i < 0 || i >= c.cur.index {
			return "", c.errorf(line, "--from=%d does not name an earlier stage", i)
		}
		return c.stages[i].name, nil
	}
	if c.allNames[strings.ToLower(from)] {
		return "", c.errorf(line, "--from=%s must name a stage defined before this one", from)
	}
	if name, ok := c.implicit[from]; ok {
		return name, nil
	}
	name := c.implicitStageName(from)
	c.implicit[from] = name
	c.earlier = append(c.earlier, wire.Stage{Name: name, FromImage: from, Steps: []wire.Step{}})
	return name, nil
}

var unsafeName = regexp.MustCompile(`[^a-z0-9._-]+`)

// implicitStageName names the stage made for COPY --from=<image>: readable
// in build logs, safe as a file name, and unlike any stage of the file.
func (c *converter) implicitStageName(ref string) string {
	name := "image-" + strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(ref), "-"), "-")
	taken := func(n string) bool {
		if c.allNames[n] {
			return true
		}
		for _, v := range c.implicit {
			if v == n {
				return true
			}
		}
		return false
	}
	for taken(name) {
		name += "-"
	}
	return name
}

// octalMode turns --chmod into the SDK's 4-digit octal mode argument.
func octalMode(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o7777 {
		return "", fmt.Errorf("--chmod=%s: only octal modes are supported", s)
	}
	return fmt.Sprintf("%04o", v), nil
}
