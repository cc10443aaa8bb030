package warren

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/pkg/warren/internal/convert"
)

// DockerfileBuild is a template build from a Dockerfile and its build
// context, as `docker build` takes them. Name is required.
type DockerfileBuild struct {
	// Name is the template's name ("name" or "name:tag").
	Name string
	// Tags are more tags for the build.
	Tags []string
	// Dir is the build context, which COPY and ADD read (default ".").
	Dir string
	// Dockerfile is the Dockerfile's path (default Dir/Dockerfile).
	Dockerfile string
	// Content, when set, is the Dockerfile itself, and Dockerfile is not
	// read.
	Content []byte
	// BuildArgs set ARGs, as --build-arg does.
	BuildArgs map[string]string
	// Target builds that stage (FROM ... AS target) and not those after it.
	Target string
	// ReadyCmd is a shell command that must succeed before a create from
	// the template returns (default: none, or the server's).
	ReadyCmd string
	// NoCache rebuilds every step instead of reusing cached layers.
	NoCache bool
	// CPUCount and MemoryMB are the resources of sandboxes from the
	// template (0: the server's defaults).
	CPUCount, MemoryMB int

	// OnLog gets the build's log and BuildDockerfile's own progress lines.
	OnLog func(BuildLogEntry)
	// OnWarning gets what the conversion ignored or left to the server
	// (each "Dockerfile:<line>: ..."), before the build starts.
	OnWarning func(string)
	// PollInterval is WaitOptions.PollInterval.
	PollInterval time.Duration
}

// BuildDockerfile builds a template from a Dockerfile and waits for it,
// as E2B's Template.build does: it converts the Dockerfile (multi-stage
// builds, ARG, ADD of archives and URLs included), requests the build,
// uploads the files of every COPY the server does not have yet, starts
// the build and follows its log. A Dockerfile the conversion refuses is
// an error naming its line; a failed build is a *BuildError whose Line is
// the Dockerfile line of the failed step when it can be told.
//
// The converter (BuildKit's parser) is not part of the SDK, so that
// programs that never build from a Dockerfile do not compile it: link it
// in with import _ "github.com/warren-sandbox/warren/pkg/warren/dockerfile",
// or convert with that package and call BuildSpec.
func (c *Client) BuildDockerfile(ctx context.Context, b DockerfileBuild) (*BuildRef, error) {
	return c.buildDockerfile(ctx, b, nil)
}

// errNoConverter says how to get the converter the SDK no longer links.
var errNoConverter = fmt.Errorf("%w: building from a Dockerfile needs its converter: import github.com/warren-sandbox/warren/pkg/warren/dockerfile", ErrInvalid)

// buildDockerfile converts and builds; adjust, when set, changes the
// converted spec first (the template builder's settings a Dockerfile
// cannot say).
func (c *Client) buildDockerfile(ctx context.Context, b DockerfileBuild, adjust func(*wire.BuildStart)) (*BuildRef, error) {
	if b.Name == "" {
		return nil, fmt.Errorf("building a Dockerfile: %w: no template name", ErrInvalid)
	}
	if convert.Dockerfile == nil {
		return nil, errNoConverter
	}
	spec, files, err := convert.Dockerfile(convert.Request{Content: b.Content, Path: b.Dockerfile, Dir: b.Dir,
		BuildArgs: b.BuildArgs, Target: b.Target, ReadyCmd: b.ReadyCmd, NoCache: b.NoCache, OnWarning: b.OnWarning})
	if err != nil {
		return nil, err
	}
	defer files.Close() // what ADD downloaded from URLs
	if adjust != nil {
		adjust(spec)
	}
	return c.BuildSpec(ctx, b.SpecBuild(spec, files))
}

// SpecBuild is the build of spec, converted from b, with b's settings.
func (b DockerfileBuild) SpecBuild(spec *wire.BuildStart, files SpecFiles) SpecBuild {
	return SpecBuild{Name: b.Name, Tags: b.Tags, CPUCount: b.CPUCount, MemoryMB: b.MemoryMB,
		Spec: spec, Files: files, OnLog: b.OnLog, PollInterval: b.PollInterval}
}

// SpecFiles writes the gzip tar of a COPY's sources (src as the step
// names it), which a build uploads.
type SpecFiles interface {
	WriteTar(w io.Writer, src string) error
}

// SpecBuild is a template build from a converted spec (what
// pkg/warren/dockerfile makes from a Dockerfile) and the files its COPY
// steps upload.
type SpecBuild struct {
	// Name is the template's name ("name" or "name:tag"); Tags are more.
	Name string
	Tags []string
	// Spec is the build request; Files, when the spec has COPY steps with
	// a files hash, writes their sources.
	Spec  *wire.BuildStart
	Files SpecFiles
	// CPUCount and MemoryMB are the resources of sandboxes from the
	// template (0: the server's defaults).
	CPUCount, MemoryMB int
	// OnLog gets the build's log and the SDK's own progress lines.
	OnLog func(BuildLogEntry)
	// PollInterval is WaitOptions.PollInterval.
	PollInterval time.Duration
}

// BuildSpec requests a build of b.Spec, uploads the files of every COPY
// the server does not have yet, starts the build and follows its log. A
// failed build is a *BuildError whose Line is the Dockerfile line of the
// failed step when the spec tells it.
func (c *Client) BuildSpec(ctx context.Context, b SpecBuild) (*BuildRef, error) {
	spec := b.Spec
	if b.Name == "" || spec == nil {
		return nil, fmt.Errorf("building a template: %w: no name or no spec", ErrInvalid)
	}
	logf := func(format string, args ...any) {
		if b.OnLog != nil {
			b.OnLog(BuildLogEntry{Timestamp: time.Now(), Level: "info", Message: fmt.Sprintf(format, args...)})
		}
	}
	logf("Requesting build for template: %s", b.Name)
	ref, err := c.RequestBuild(ctx, b.Name, BuildOptions{Tags: b.Tags, CPUCount: b.CPUCount, MemoryMB: b.MemoryMB})
	if err != nil {
		return nil, err
	}
	logf("Template created with ID: %s, Build ID: %s", ref.TemplateID, ref.BuildID)
	if err := c.uploadCopies(ctx, ref.TemplateID, spec, b.Files, logf); err != nil {
		return ref, err
	}
	logf("Starting building...")
	if err := c.StartBuild(ctx, ref.TemplateID, ref.BuildID, *spec); err != nil {
		return ref, err
	}
	_, err = c.WaitBuild(ctx, ref.TemplateID, ref.BuildID, WaitOptions{OnLog: b.OnLog, PollInterval: b.PollInterval})
	var be *BuildError
	if errors.As(err, &be) {
		be.Line = stepLine(spec, be.Step)
	}
	return ref, err
}

// uploadCopies uploads the sources of every COPY step with a files hash,
// of the final stage and the earlier ones, unless the server has them.
func (c *Client) uploadCopies(ctx context.Context, templateID string, spec *wire.BuildStart, files SpecFiles, logf func(string, ...any)) error {
	done := map[string]bool{}
	for _, step := range copySteps(spec) {
		if done[step.FilesHash] {
			continue
		}
		done[step.FilesHash] = true
		src := step.Args[0]
		link, err := c.GetTemplateFiles(ctx, templateID, step.FilesHash)
		if err != nil {
			return err
		}
		// As the SDK: without a URL there is nowhere to upload to, and the
		// server is taken to have the files.
		if link.Present || link.URL == "" {
			logf("Skipping upload of '%s', already cached", src)
			continue
		}
		if files == nil {
			return fmt.Errorf("Dockerfile:%d: COPY %s: %w: no build context to upload from", step.Line, src, ErrInvalid)
		}
		if err := c.uploadTar(ctx, files, src, link); err != nil {
			return fmt.Errorf("Dockerfile:%d: COPY %s: %w", step.Line, src, err)
		}
		logf("Uploaded '%s'", src)
	}
	logf("All file uploads completed")
	return nil
}

// copySteps lists the COPY steps whose files come from the build context.
func copySteps(spec *wire.BuildStart) []wire.Step {
	var out []wire.Step
	add := func(steps []wire.Step) {
		for _, s := range steps {
			if s.Type == wire.StepCopy && s.FilesHash != "" && len(s.Args) > 0 {
				out = append(out, s)
			}
		}
	}
	for _, st := range spec.Stages {
		add(st.Steps)
	}
	add(spec.Steps)
	return out
}

// uploadTar spools the gzip tar of src to a temporary file first: the
// upload needs its exact length up front, and memory stays bounded for
// big contexts.
func (c *Client) uploadTar(ctx context.Context, files SpecFiles, src string, link FilesLink) error {
	f, err := os.CreateTemp("", "warren-context-*.tar.gz")
	if err != nil {
		return fmt.Errorf("spooling files: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := files.WriteTar(f, src); err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("spooling files: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("spooling files: %w", err)
	}
	return c.UploadFiles(ctx, link, f, size)
}

// stepLine maps the server's failed-step reference to a Dockerfile line.
// Step n is Steps[n-1] (0 is the base image), as the SDK counts; with
// earlier stages the numbering is the server's own, so no line is guessed.
func stepLine(spec *wire.BuildStart, step string) int {
	n, err := strconv.Atoi(step)
	if err != nil || len(spec.Stages) > 0 || n < 1 || n > len(spec.Steps) {
		return 0
	}
	return spec.Steps[n-1].Line
}
