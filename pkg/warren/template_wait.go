package warren

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// DefaultBuildPollInterval is how often WaitBuild asks for a build's
// status, as E2B's SDK does.
const DefaultBuildPollInterval = 200 * time.Millisecond

// BuildError is a build that ended failed: errors.As finds it in what
// WaitBuild and BuildDockerfile return.
type BuildError struct {
	TemplateID, BuildID string
	// Message is the server's reason.
	Message string
	// Step is the server's reference to the failed step, if it gave one.
	Step string
	// Line is the Dockerfile line of that step, when BuildDockerfile could
	// tell it.
	Line int
}

// Error names the Dockerfile line and the step when they are known.
func (e *BuildError) Error() string {
	if strings.HasPrefix(e.Message, "Dockerfile:") {
		return "build failed: " + e.Message // the server named the line
	}
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "Dockerfile:%d: ", e.Line)
	}
	b.WriteString("build failed")
	if e.Step != "" {
		fmt.Fprintf(&b, " at step %s", e.Step)
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

// WaitOptions follow a build; the zero value polls every
// DefaultBuildPollInterval and drops the log.
type WaitOptions struct {
	// OnLog gets every log line of the build, once, in order.
	OnLog func(BuildLogEntry)
	// PollInterval is the time between two status requests.
	PollInterval time.Duration
}

// WaitBuild polls a build until it is ready or failed, handing each new
// log line to OnLog, as E2B's waitForBuildFinish does: once the build is
// over it reads on until no line is left, so the log's tail is not lost.
// It returns the final status, and for a failed build a *BuildError.
func (c *Client) WaitBuild(ctx context.Context, templateID, buildID string, o WaitOptions) (*BuildStatus, error) {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultBuildPollInterval
	}
	offset := 0
	poll := func() (*BuildStatus, error) {
		st, err := c.GetBuildStatus(ctx, templateID, buildID, offset)
		if err != nil {
			return nil, err
		}
		offset += len(st.LogEntries)
		if o.OnLog != nil {
			for _, e := range st.LogEntries {
				o.OnLog(e)
			}
		}
		return st, nil
	}
	for {
		st, err := poll()
		if err != nil {
			return nil, err
		}
		switch st.Status {
		case BuildReady, BuildFailed:
			for tail := st; len(tail.LogEntries) > 0; {
				if tail, err = poll(); err != nil {
					return nil, err
				}
			}
			return st, st.err()
		case BuildBuilding, BuildWaiting:
		default:
			return st, fmt.Errorf("build %s: unknown status %q", buildID, st.Status)
		}
		if err := sleepCtx(ctx, o.PollInterval); err != nil {
			return nil, fmt.Errorf("waiting for build %s: %w", buildID, err)
		}
	}
}

// err is the *BuildError of a failed build, nil for any other.
func (st *BuildStatus) err() error {
	if st.Status != BuildFailed {
		return nil
	}
	be := &BuildError{TemplateID: st.TemplateID, BuildID: st.BuildID, Message: st.Reason, Step: st.ReasonStep}
	if be.Message == "" {
		be.Message = "unknown error"
	}
	return be
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
