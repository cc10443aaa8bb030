package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Inspect implements runtime.Backend.Inspect.
func (b *Backend) Inspect(ctx context.Context, id string) (*runtime.Instance, error) {
	rec, err := b.record(id)
	if err != nil {
		return nil, err
	}
	if b.forgotten(id) {
		// What `runsc state` would say, without starting runsc: a paused
		// sandbox on disk is inspected on every resume.
		return rec.instance(runtime.StateStopped, 0), nil
	}
	st, err := b.cli.state(ctx, id)
	if errors.Is(err, errdefs.ErrNotFound) {
		// The runtime forgot it (host reboot, runtime state wiped): the
		// sandbox still holds its state dir and network until Destroy.
		return rec.instance(runtime.StateStopped, 0), nil
	}
	if err != nil {
		return nil, fmt.Errorf("inspecting sandbox %s: %w", id, err)
	}
	inst := b.withState(rec, st)
	if inst.State == runtime.StateStopped && !rec.Stopped {
		inst.OOMKilled = b.cg.oomKills(b.cgroupPath(id)) > 0
	}
	return inst, nil
}

// List implements runtime.Backend.List: every sandbox with an instance
// record, with states from one `list` call to the runtime.
func (b *Backend) List(ctx context.Context) ([]*runtime.Instance, error) {
	ids, err := b.stateDirs()
	if err != nil {
		return nil, err
	}
	states, err := b.cli.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	var out []*runtime.Instance
	for _, id := range ids {
		rec, err := b.record(id)
		if err != nil {
			continue // being created or destroyed right now
		}
		st, ok := states[id]
		if !ok {
			out = append(out, rec.instance(runtime.StateStopped, 0))
			continue
		}
		out = append(out, b.withState(rec, &st))
	}
	return out, nil
}

// record reads id's instance record; errdefs.ErrNotFound if id was never
// (fully) created.
func (b *Backend) record(id string) (*record, error) {
	if err := validID(id); err != nil {
		return nil, fmt.Errorf("sandbox %q: %w", id, errdefs.ErrNotFound)
	}
	rec, err := readRecord(b.dir(id))
	if err != nil {
		if errors.Is(err, errdefs.ErrNotFound) {
			return nil, fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
		}
		return nil, err
	}
	return rec, nil
}

func (b *Backend) withState(rec *record, st *containerState) *runtime.Instance {
	if (st.Status == "running" || st.Status == "paused") && !alive(st.Pid) {
		// A dead init that nobody has reaped yet still counts as running
		// to runc and runsc; on a host whose PID 1 reaps slowly a crashed
		// sandbox would otherwise look alive (and be re-adopted).
		return rec.instance(runtime.StateStopped, 0)
	}
	switch st.Status {
	case "running":
		return rec.instance(runtime.StateRunning, st.Pid)
	case "paused":
		return rec.instance(runtime.StatePaused, st.Pid)
	default: // "stopped", or "created" (init never started)
		return rec.instance(runtime.StateStopped, 0)
	}
}

// stateDirs lists the ids that have a state dir, sorted.
func (b *Backend) stateDirs() ([]string, error) {
	entries, err := os.ReadDir(b.opts.StateRoot)
	if err != nil {
		return nil, fmt.Errorf("reading state root: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && validID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// alive reports whether pid is a process that has not exited: present in
// /proc and not a zombie.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state letter follows the parenthesised command name, which may
	// itself contain parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state != 'Z' && state != 'X'
}
