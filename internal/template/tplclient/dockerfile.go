package tplclient

import (
	"context"
	"errors"
	"fmt"
	"github.com/warren-sandbox/warren/internal/wire"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/internal/template/dockerfile"
)

// BuildDockerfile builds req (a converted Dockerfile) as template name and
// waits for the result, the way the SDK's Template.build does: request the
// build, upload the files of every COPY the server does not have yet, start
// the build and follow its log. onLog (may be nil) gets the server's log
// and a few progress lines of its own. A failed build is a *BuildError
// with the server's reason.
func BuildDockerfile(ctx context.Context, c *Client, req *wire.BuildStart, bctx *dockerfile.Context, name string, tags []string, cpu, mem int, onLog func(wire.BuildLogEntry)) error {
	logf := func(format string, args ...any) {
		if onLog != nil {
			onLog(wire.BuildLogEntry{Timestamp: time.Now(), Level: "info", Message: fmt.Sprintf(format, args...)})
		}
	}
	logf("Requesting build for template: %s", name)
	ref, err := c.RequestBuild(ctx, name, tags, cpu, mem)
	if err != nil {
		return err
	}
	logf("Template created with ID: %s, Build ID: %s", ref.TemplateID, ref.BuildID)
	if err := uploadFiles(ctx, c, ref.TemplateID, req, bctx, logf); err != nil {
		return err
	}
	logf("Starting building...")
	if err := c.StartBuild(ctx, ref.TemplateID, ref.BuildID, req); err != nil {
		return err
	}
	_, err = c.Wait(ctx, ref.TemplateID, ref.BuildID, onLog)
	var be *BuildError
	if errors.As(err, &be) {
		be.Line = stepLine(req, be.Step)
	}
	return err
}

// uploadFiles uploads the sources of every COPY step with a files hash,
// in the final stage and the earlier ones, unless the server has them.
func uploadFiles(ctx context.Context, c *Client, templateID string, req *wire.BuildStart, bctx *dockerfile.Context, logf func(string, ...any)) error {
	done := map[string]bool{}
	for _, step := range copySteps(req) {
		if done[step.FilesHash] {
			continue
		}
		done[step.FilesHash] = true
		src := step.Args[0]
		if bctx == nil {
			return fmt.Errorf("Dockerfile:%d: COPY %s needs a build context", step.Line, src)
		}
		present, url, headers, err := c.FileLink(ctx, templateID, step.FilesHash)
		if err != nil {
			return err
		}
		// As the SDK: without a URL there is nowhere to upload to, and the
		// server is taken to have the files.
		if present || url == "" {
			logf("Skipping upload of '%s', already cached", src)
			continue
		}
		if err := uploadTar(ctx, c, bctx, src, url, headers); err != nil {
			return fmt.Errorf("Dockerfile:%d: COPY %s: %w", step.Line, src, err)
		}
		logf("Uploaded '%s'", src)
	}
	logf("All file uploads completed")
	return nil
}

// copySteps lists the COPY steps whose files come from the build context.
func copySteps(req *wire.BuildStart) []wire.Step {
	var out []wire.Step
	add := func(steps []wire.Step) {
		for _, s := range steps {
			if s.Type == wire.StepCopy && s.FilesHash != "" && len(s.Args) > 0 {
				out = append(out, s)
			}
		}
	}
	for _, st := range req.Stages {
		add(st.Steps)
	}
	add(req.Steps)
	return out
}

// uploadTar spools the gzip tar to a temporary file first: the upload needs
// its exact length up front, and memory stays bounded for big contexts.
func uploadTar(ctx context.Context, c *Client, bctx *dockerfile.Context, src, url string, headers map[string]string) error {
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
	return c.Upload(ctx, url, headers, f, size)
}

// stepLine maps the server's failed-step reference to a Dockerfile line.
// Step n is Steps[n-1] (0 is the base image), as the SDK counts; with
// earlier stages the numbering is the server's own, so no line is guessed.
func stepLine(req *wire.BuildStart, step string) int {
	n, err := strconv.Atoi(step)
	if err != nil || len(req.Stages) > 0 || n < 1 || n > len(req.Steps) {
		return 0
	}
	return req.Steps[n-1].Line
}
