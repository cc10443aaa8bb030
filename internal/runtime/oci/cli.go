package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// cli drives one OCI runtime binary. runc and runsc share the subcommands
// used here (run, state, list, pause, resume, kill, delete); they differ only
// in global flags.
type cli struct {
	binary string
	global []string // --root and, for runsc, platform/network/seccomp flags
	// guard orders runsc's lock files with deletes; nil for runc, whose
	// reads make no files.
	guard *rootGuard
}

// containerState is the part of `state`/`list --format json` output we use.
type containerState struct {
	ID     string `json:"id"`
	Pid    int    `json:"pid"`
	Status string `json:"status"` // created, running, paused, stopped
}

// command is the runtime invoked with args and a minimal environment: the
// runtime's long-lived processes (runsc's gofer, runc's init before it
// execs) inherit it, and warren's own (WARREN_API_KEY, say) is none of
// their business.
func (c *cli) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.binary, args...)
	cmd.Env = runtimeEnv()
	return cmd
}

// runtimeEnv is what the runtimes need: a PATH (runc looks up helpers)
// and, where set, TMPDIR.
func runtimeEnv() []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if t := os.Getenv("TMPDIR"); t != "" {
		env = append(env, "TMPDIR="+t)
	}
	return env
}

// exec runs a subcommand and returns its stdout; the error carries stderr.
func (c *cli) exec(ctx context.Context, args ...string) ([]byte, error) {
	cmd := c.command(ctx, append(c.global, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &cliError{args: args, err: err, stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.Bytes(), nil
}

// cliError is a failed runtime invocation with what it printed.
type cliError struct {
	args   []string
	err    error
	stderr string
}

func (e *cliError) Error() string {
	return fmt.Sprintf("%s: %v: %s", e.args[0], e.err, e.stderr)
}

func (e *cliError) Unwrap() error { return e.err }

// notExist reports whether the runtime said the container does not exist.
func notExist(err error) bool {
	var ce *cliError
	if !errors.As(err, &ce) {
		return false
	}
	s := strings.ToLower(ce.stderr)
	return strings.Contains(s, "does not exist") || strings.Contains(s, "not exist") || strings.Contains(s, "not found")
}

// run creates and starts container id from bundle, detached. The init's
// stdout and stderr (and the runtime's own error messages) go to logFile.
// With background, the runtime runs under nice(1) at the lowest priority:
// set before it execs, so every thread and child it makes has it.
func (c *cli) run(ctx context.Context, id, bundle, pidFile string, logFile *os.File, background bool) error {
	args := append(c.global, "run", "--detach", "--bundle", bundle, "--pid-file", pidFile, id)
	cmd := c.command(ctx, args...)
	if background {
		cmd = exec.CommandContext(ctx, "nice", append([]string{"-n", "19", c.binary}, args...)...)
		cmd.Env = runtimeEnv()
	}
	// An *os.File is handed to the child as is (no copying goroutine), so
	// Wait returns when the runtime exits even though the container keeps
	// the descriptor open.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s run: %w", c.binary, err)
	}
	return nil
}

// restore creates container id from bundle and restores the memory image in
// imageDir into it, detached, with the output handling of run.
func (c *cli) restore(ctx context.Context, id, bundle, imageDir, pidFile string, logFile *os.File) error {
	args := append(c.global, "restore", "--detach", "--bundle", bundle, "--image-path", imageDir, "--pid-file", pidFile, id)
	cmd := c.command(ctx, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s restore: %w", c.binary, err)
	}
	return nil
}

func (c *cli) state(ctx context.Context, id string) (*containerState, error) {
	var out []byte
	err := c.guard.read(func() (err error) {
		out, err = c.exec(ctx, "state", id)
		return err
	})
	if err != nil {
		if notExist(err) {
			return nil, fmt.Errorf("container %s: %w", id, errdefs.ErrNotFound)
		}
		return nil, err
	}
	var st containerState
	if err := json.Unmarshal(out, &st); err != nil {
		return nil, fmt.Errorf("parsing state of %s: %w", id, err)
	}
	return &st, nil
}

func (c *cli) list(ctx context.Context) (map[string]containerState, error) {
	var out []byte
	err := c.guard.read(func() (err error) {
		out, err = c.exec(ctx, "list", "--format", "json")
		return err
	})
	if err != nil {
		return nil, err
	}
	var states []containerState
	if s := bytes.TrimSpace(out); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if err := json.Unmarshal(s, &states); err != nil {
			return nil, fmt.Errorf("parsing container list: %w", err)
		}
	}
	m := make(map[string]containerState, len(states))
	for _, st := range states {
		m[st.ID] = st
	}
	return m, nil
}

// delete deletes a stopped container; a container the runtime does not
// know is already deleted.
func (c *cli) delete(ctx context.Context, id string) error {
	if _, err := c.exec(ctx, "delete", id); err != nil && !notExist(err) {
		return err
	}
	return c.guard.forget(id)
}

// forceDelete kills every process of the container and deletes it; a
// container the runtime does not know is already deleted.
func (c *cli) forceDelete(ctx context.Context, id string) error {
	if _, err := c.exec(ctx, "delete", "--force", id); err != nil && !notExist(err) {
		return err
	}
	return c.guard.forget(id)
}
