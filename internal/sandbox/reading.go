package sandbox

import "time"

// Reading is what the host reads of a running sandbox's use (its cgroup
// and writable layer; envd is not asked), which the metrics history turns
// into a Metric.
type Reading struct {
	Team      string
	StartedAt time.Time // when it started (or was last restored)
	CPUCount  int       // what the backend reports, else the record's
	CPUNanos  uint64    // cumulative CPU time of all its processes
	MemUsed   uint64    // bytes, excluding page cache
	MemCache  uint64
	MemTotal  uint64
	DiskUsed  uint64
	DiskTotal uint64
}
