package sandbox

import (
	"context"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/store"
)

// CreateRequest is what the API hands the manager for a new sandbox.
type CreateRequest struct {
	TemplateID string
	Timeout    time.Duration
	Metadata   map[string]string
	EnvVars    map[string]string
	Secure     bool // mint an envd access token
	// CPUCount and MemoryMB, when set, override the template's.
	CPUCount, MemoryMB int
	AutoPause          bool
	AutoPauseNoMemory  bool
	AutoResume         bool
	Network            netpolicy.Policy // with the internet switch
	APIKeyID           string
	// TeamID owns the new sandbox; only its own templates and snapshots
	// (and public templates) are found, unless AnyTeam (the admin key).
	TeamID  string
	AnyTeam bool
	// VolumeMounts are the team's volumes to mount, by Name at Path; the
	// manager fills VolumeID.
	VolumeMounts []store.VolumeMount
}

// MaxForks bounds the forks of one request, as E2B's API does.
const MaxForks = 100

// ForkResult is one fork's outcome: a sandbox, or why it did not start.
type ForkResult struct {
	Sandbox *store.Sandbox
	Err     error
}

// Metric is one sample of a sandbox's resource use, in the units of E2B's
// SandboxMetric.
type Metric struct {
	Timestamp  time.Time
	CPUCount   int
	CPUUsedPct float64
	MemUsed    uint64
	MemTotal   uint64
	MemCache   uint64
	DiskUsed   uint64
	DiskTotal  uint64
}

// Live is one sandbox in the manager's live view, as a census reports it.
type Live struct {
	ID, TemplateID, Runtime, Team string
	Running                       bool // false: paused
	CPUCount, MemoryMB            int
	// Latest is the newest sample the metrics sampler took of a running
	// sandbox; nil for a paused one or one not sampled yet.
	Latest *Metric
}

// PoolStat is one pool's state, for metrics and logs.
type PoolStat struct {
	Template, Runtime     string
	Ready, Target, HeldMB int
	Hits, Misses          int64
}

// Quota is what one team may run at once; 0 means no limit.
type Quota struct {
	Sandboxes int // running sandboxes
	MemoryMB  int // their total memory
	CPUs      int // their total vCPUs
}

// FilterSnapshots keeps, in order, the snapshots of sandboxID and those
// with id or name name; "" keeps all.
func FilterSnapshots(all []*store.Snapshot, sandboxID, name string) []*store.Snapshot {
	out := all[:0]
	for _, s := range all {
		if sandboxID != "" && s.SandboxID != sandboxID {
			continue
		}
		if name != "" && s.ID != name && !slices.Contains(s.Names, name) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// EventRecorder records lifecycle events (*events.Service). The manager
// calls it once an operation has succeeded; it must not fail or hold up
// the operation (it logs its own errors).
type EventRecorder interface {
	Record(ctx context.Context, e *store.Event)
}
