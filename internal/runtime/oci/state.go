package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Files in a sandbox's state dir, <StateRoot>/<id>/.
const (
	recordFile = "instance.json" // written last: its presence means "created"
	configFile = "config.json"   // the OCI bundle's config
	rootfsDir  = "rootfs"        // the overlay's merged mount point
	upperDir   = "upper"
	workDir    = "work"
	initLog    = "init.log" // init's stdout/stderr and the runtime's errors
	pidFile    = "init.pid"
	imageDir   = "checkpoint" // the memory image of a stopped sandbox
)

// record is what survives a warren restart about one sandbox.
type record struct {
	ID      string     `json:"id"`
	Backend string     `json:"backend"`
	IP      netip.Addr `json:"ip"`
	// Egress is embedded, so its fields stay at the top level of
	// instance.json as records written before it existed have them.
	netpolicy.Egress
	Labels    map[string]string `json:"labels,omitempty"`
	CreatedAt time.Time         `json:"createdAt"`
	CPUCount  int               `json:"cpuCount"`
	MemoryMB  int               `json:"memoryMB"`
	DiskMB    int               `json:"diskMB,omitempty"`
	// Layers are the overlay's lower dirs, top first; the template's
	// rootfs is the last (the only one unless made from a snapshot).
	Layers []string `json:"layers"`
	// Mounts are the volume mounts, as in the bundle's config.
	Mounts []runtime.Mount `json:"mounts,omitempty"`
	// Stopped: Stop ended the processes on purpose; Checkpointed: with a
	// memory image in imageDir for Start to restore.
	Stopped      bool `json:"stopped,omitempty"`
	Checkpointed bool `json:"checkpointed,omitempty"`
	// Checkpointing: Stop is writing a memory image to imageDir; Recover
	// settles one a crash left under way (settleCheckpoint).
	Checkpointing bool `json:"checkpointing,omitempty"`
	// Moving is the snapshot layer the writable layer is being moved to,
	// set before the move starts; Recover finishes or undoes a move a
	// crash interrupted.
	Moving string `json:"moving,omitempty"`
}

func (r *record) instance(state runtime.State, pid int) *runtime.Instance {
	return &runtime.Instance{
		ID:        r.ID,
		Backend:   r.Backend,
		State:     state,
		IP:        r.IP,
		Pid:       pid,
		CreatedAt: r.CreatedAt,
		Labels:    maps.Clone(r.Labels),
		Layers:    slices.Clone(r.Layers),
		// A stopped sandbox reports its image whatever the runtime says.
		Checkpointed: r.Checkpointed && state == runtime.StateStopped,
	}
}

// writeRecord writes the record atomically (temp file + rename), so a crash
// never leaves a half-written instance.json that would hide the sandbox.
func writeRecord(dir string, r *record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding instance record: %w", err)
	}
	tmp := filepath.Join(dir, recordFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing instance record: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, recordFile)); err != nil {
		return fmt.Errorf("writing instance record: %w", err)
	}
	return nil
}

// readRecord reads dir's record; errdefs.ErrNotFound when there is none.
func readRecord(dir string) (*record, error) {
	data, err := os.ReadFile(filepath.Join(dir, recordFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("instance record in %s: %w", dir, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading instance record: %w", err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("parsing instance record in %s: %w", dir, err)
	}
	return &r, nil
}
