package warren

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/pkg/warren/dockerfile"
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
func (c *Client) BuildDockerfile(ctx context.Context, b DockerfileBuild) (*BuildRef, error) {
	return c.buildDockerfile(ctx, b, nil)
}

// buildDockerfile converts and builds; adjust, when set, changes the
// converted spec first (the template builder's settings a Dockerfile
// cannot say).
func (c *Client) buildDockerfile(ctx context.Context, b DockerfileBuild, adjust func(*rest.BuildStart)) (*BuildRef, error) {
	if b.Name == "" {
		return nil, fmt.Errorf("building a Dockerfile: %w: no template name", ErrInvalid)
	}
	if b.Dir == "" {
		b.Dir = "."
	}
	src := b.Content
	if src == nil {
		if b.Dockerfile == "" {
			b.Dockerfile = filepath.Join(b.Dir, "Dockerfile")
		}
		var err error
		if src, err = os.ReadFile(b.Dockerfile); err != nil {
			return nil, err
		}
	}
	bctx, err := dockerfile.NewContext(b.Dir)
	if err != nil {
		return nil, err
	}
	defer bctx.Close() // what ADD downloaded from URLs
	spec, warnings, err := dockerfile.Convert(src, dockerfile.Options{BuildArgs: b.BuildArgs, Context: bctx, Target: b.Target})
	if err != nil {
		return nil, err
	}
	if b.OnWarning != nil {
		for _, w := range warnings {
			b.OnWarning(w)
		}
	}
	if b.ReadyCmd != "" {
		spec.ReadyCmd = b.ReadyCmd
	}
	spec.Force = b.NoCache
	if adjust != nil {
		adjust(spec)
	}
	return c.buildSpec(ctx, &b, spec, bctx)
}

// buildSpec runs a converted Dockerfile's build: request, uploads, start,
// wait.
func (c *Client) buildSpec(ctx context.Context, b *DockerfileBuild, spec *rest.BuildStart, bctx *dockerfile.Context) (*BuildRef, error) {
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
	if err := c.uploadCopies(ctx, ref.TemplateID, spec, bctx, logf); err != nil {
		return ref, err
	}
	logf("Starting building...")
	body, err := json.Marshal(spec)
	if err != nil {
		return ref, fmt.Errorf("starting build %s: %w", ref.BuildID, err)
	}
	if err := c.startBuild(ctx, ref.TemplateID, ref.BuildID, body); err != nil {
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
func (c *Client) uploadCopies(ctx context.Context, templateID string, spec *rest.BuildStart, bctx *dockerfile.Context, logf func(string, ...any)) error {
	done := map[string]bool{}
	for _, step := range copySteps(spec) {
		if done[step.FilesHash] {
			continue
		}
		done[step.FilesHash] = true
		src := step.Args[0]
		link, err := c.TemplateFiles(ctx, templateID, step.FilesHash)
		if err != nil {
			return err
		}
		// As the SDK: without a URL there is nowhere to upload to, and the
		// server is taken to have the files.
		if link.Present || link.URL == "" {
			logf("Skipping upload of '%s', already cached", src)
			continue
		}
		if err := c.uploadTar(ctx, bctx, src, link); err != nil {
			return fmt.Errorf("Dockerfile:%d: COPY %s: %w", step.Line, src, err)
		}
		logf("Uploaded '%s'", src)
	}
	logf("All file uploads completed")
	return nil
}

// copySteps lists the COPY steps whose files come from the build context.
func copySteps(spec *rest.BuildStart) []rest.Step {
	var out []rest.Step
	add := func(steps []rest.Step) {
		for _, s := range steps {
			if s.Type == rest.StepTypeCOPY && s.FilesHash != "" && len(s.Args) > 0 {
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
func (c *Client) uploadTar(ctx context.Context, bctx *dockerfile.Context, src string, link FilesLink) error {
	f, err := os.CreateTemp("", "warren-context-*.tar.gz")
	if err != nil {
		return fmt.Errorf("spooling files: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := bctx.WriteTar(f, src); err != nil {
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
func stepLine(spec *rest.BuildStart, step string) int {
	n, err := strconv.Atoi(step)
	if err != nil || len(spec.Stages) > 0 || n < 1 || n > len(spec.Steps) {
		return 0
	}
	return spec.Steps[n-1].Line
}
