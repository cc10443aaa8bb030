package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	gorunc "github.com/containerd/go-runc"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// cli drives one OCI runtime binary through go-runc. runc and runsc share
// the subcommands used here (run, restore, state, list, pause, resume,
// checkpoint, delete); they differ only in global flags, which for runsc
// ride in the Runc's ExtraArgs after --root.
type cli struct {
	rc *gorunc.Runc
	// guard orders runsc's lock files with deletes; nil for runc, whose
	// reads make no files.
	guard *rootGuard
	// mem are the checkpoint and restore flags of memflags.go (runsc).
	mem memoryFlags
}

// newCLI drives binary with the runtime root and extra global flags.
func newCLI(binary, root string, extra []string, guard *rootGuard) *cli {
	installMonitor()
	return &cli{rc: &gorunc.Runc{Command: binary, Root: root, ExtraArgs: extra}, guard: guard}
}

// containerState is the part of `state`/`list --format json` output we use.
type containerState struct {
	ID     string
	Pid    int
	Status string // created, running, paused, stopped
}

// fileIO hands the runtime an open file for stdout and stderr. An
// *os.File is given to the child as is (no copying goroutine), so the wait
// returns when the runtime exits even though the container keeps the
// descriptor open.
type fileIO struct{ f *os.File }

func (fileIO) Close() error { return nil } // the caller owns f

func (o fileIO) Set(cmd *exec.Cmd) { cmd.Stdout, cmd.Stderr = o.f, o.f }

func (fileIO) Stdin() io.WriteCloser { return nil }
func (fileIO) Stdout() io.ReadCloser { return nil }
func (fileIO) Stderr() io.ReadCloser { return nil }

// run creates and starts container id from bundle, detached. The init's
// stdout and stderr (and the runtime's own error messages) go to logFile.
// With background, the runtime runs under nice(1) at the lowest priority:
// set before it execs, so every thread and child it makes has it.
func (c *cli) run(ctx context.Context, id, bundle, pidFile string, logFile *os.File, background bool) error {
	ctx = warrenCall(ctx, background)
	_, err := c.rc.Run(ctx, id, bundle, &gorunc.CreateOpts{IO: fileIO{logFile}, PidFile: pidFile, Detach: true})
	if err != nil {
		return fmt.Errorf("%s run: %w", c.rc.Command, err)
	}
	return nil
}

// restore creates container id from bundle and restores the memory image in
// imageDir into it, detached, with the output handling of run. With
// --background (memflags.go) the pages may still be loading when it
// returns.
func (c *cli) restore(ctx context.Context, id, bundle, imageDir, pidFile string, logFile *os.File) error {
	opts := &gorunc.RestoreOpts{
		CheckpointOpts: gorunc.CheckpointOpts{ImagePath: imageDir},
		IO:             fileIO{logFile},
		Detach:         true,
		PidFile:        pidFile,
		ExtraArgs:      c.mem.restoreArgs(imageDir),
	}
	if _, err := c.rc.Restore(warrenCall(ctx, false), id, bundle, opts); err != nil {
		return fmt.Errorf("%s restore: %w", c.rc.Command, err)
	}
	return nil
}

// state is container id's state; errdefs.ErrNotFound if the runtime does
// not know it.
func (c *cli) state(ctx context.Context, id string) (*containerState, error) {
	var ct *gorunc.Container
	err := c.guard.read(func() (err error) {
		ct, err = c.rc.State(warrenCall(ctx, false), id)
		return err
	})
	if err != nil {
		if notExist(err) {
			return nil, fmt.Errorf("container %s: %w", id, errdefs.ErrNotFound)
		}
		return nil, fmt.Errorf("state of %s: %w", id, err)
	}
	return &containerState{ID: ct.ID, Pid: ct.Pid, Status: ct.Status}, nil
}

// list is the state of every container the runtime knows, by id.
func (c *cli) list(ctx context.Context) (map[string]containerState, error) {
	var cts []*gorunc.Container
	err := c.guard.read(func() (err error) {
		cts, err = c.rc.List(warrenCall(ctx, false))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s list: %w", c.rc.Command, err)
	}
	m := make(map[string]containerState, len(cts))
	for _, ct := range cts {
		m[ct.ID] = containerState{ID: ct.ID, Pid: ct.Pid, Status: ct.Status}
	}
	return m, nil
}

// pause freezes container id.
func (c *cli) pause(ctx context.Context, id string) error {
	if err := c.rc.Pause(warrenCall(ctx, false), id); err != nil {
		return fmt.Errorf("pause %s: %w", id, err)
	}
	return nil
}

// resume thaws container id.
func (c *cli) resume(ctx context.Context, id string) error {
	if err := c.rc.Resume(warrenCall(ctx, false), id); err != nil {
		return fmt.Errorf("resume %s: %w", id, err)
	}
	return nil
}

// checkpoint saves container id's memory into img (runsc stops it).
func (c *cli) checkpoint(ctx context.Context, id, img string) error {
	opts := &gorunc.CheckpointOpts{ImagePath: img, ExtraArgs: c.mem.checkpoint}
	if err := c.rc.Checkpoint(warrenCall(ctx, false), id, opts); err != nil {
		return fmt.Errorf("checkpoint %s: %w", id, err)
	}
	return nil
}

// delete deletes a stopped container; a container the runtime does not
// know is already deleted.
func (c *cli) delete(ctx context.Context, id string) error {
	return c.remove(ctx, id, false)
}

// forceDelete kills every process of the container and deletes it; a
// container the runtime does not know is already deleted.
func (c *cli) forceDelete(ctx context.Context, id string) error {
	return c.remove(ctx, id, true)
}

func (c *cli) remove(ctx context.Context, id string, force bool) error {
	err := c.rc.Delete(warrenCall(ctx, false), id, &gorunc.DeleteOpts{Force: force})
	if err != nil && !notExist(err) {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return c.guard.forget(id)
}

// notExist reports whether the runtime said the container does not exist.
// go-runc puts what the runtime printed into the error's text after the
// exit status; an error without one (the binary did not start) is not the
// runtime's answer.
func notExist(err error) bool {
	var exit *gorunc.ExitError
	s := strings.ToLower(err.Error())
	if !errors.As(err, &exit) && !strings.Contains(s, "exit status") {
		return false
	}
	return strings.Contains(s, "does not exist") || strings.Contains(s, "not exist") || strings.Contains(s, "not found")
}
