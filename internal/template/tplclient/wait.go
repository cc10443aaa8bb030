package tplclient

import (
	"context"
	"fmt"
	"github.com/warren-sandbox/warren/internal/wire"
	"strings"
	"time"
)

// BuildError is a build that ended in the "error" state.
type BuildError struct {
	Message string
	// Step is the server's reference to the failed step, if it gave one.
	Step string
	// Line is the Dockerfile line of that step, when BuildDockerfile could
	// tell it.
	Line int
}

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

// Wait polls a build until it is ready or failed, handing every new log
// entry to onLog (which may be nil), as the SDK's waitForBuildFinish does:
// once the build is over it keeps reading until no log entries are left,
// so the tail of the log is not lost. A failed build returns its final
// status and a *BuildError.
func (c *Client) Wait(ctx context.Context, templateID, buildID string, onLog func(wire.BuildLogEntry)) (*wire.BuildStatus, error) {
	offset := 0
	poll := func() (*wire.BuildStatus, error) {
		st, err := c.Status(ctx, templateID, buildID, offset)
		if err != nil {
			return nil, err
		}
		offset += len(st.LogEntries)
		if onLog != nil {
			for _, e := range st.LogEntries {
				onLog(e)
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
		case wire.BuildReady, wire.BuildError:
			for tail := st; len(tail.LogEntries) > 0; {
				if tail, err = poll(); err != nil {
					return nil, err
				}
			}
			return st, buildErr(st)
		case wire.BuildBuilding, wire.BuildWaiting:
		default:
			return st, fmt.Errorf("build %s: unknown status %q", buildID, st.Status)
		}
		if err := sleep(ctx, c.PollInterval); err != nil {
			return nil, err
		}
	}
}

func buildErr(st *wire.BuildStatus) error {
	if st.Status != wire.BuildError {
		return nil
	}
	be := &BuildError{Message: "unknown error"}
	if st.Reason != nil {
		be.Step = st.Reason.Step
		if st.Reason.Message != "" {
			be.Message = st.Reason.Message
		}
	}
	return be
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
