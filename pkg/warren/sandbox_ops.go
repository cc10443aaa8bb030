package warren

import (
	"context"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// Resume starts a paused sandbox again; it then lives at least timeout,
// and at least what it had left when paused (0: just that, as Connect
// says). Connect does the same and also accepts a running sandbox.
func (c *Client) Resume(ctx context.Context, id string, timeout time.Duration) (*Sandbox, error) {
	var body rest.ResumeSandboxJSONRequestBody
	body.Timeout = seconds(timeout)
	resp, err := c.api.ResumeSandboxWithResponse(ctx, id, body)
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return nil, err
	}
	return c.sandbox(resp.JSON201), nil
}

// Snapshot is a saved sandbox that creates can start from: pass its ID,
// or one of its names, as the template.
type Snapshot struct {
	ID    string
	Names []string
}

// Snapshot saves a running sandbox's disk and memory, leaving it running.
// name ("": none) lets creates refer to it by name.
func (c *Client) Snapshot(ctx context.Context, id, name string) (Snapshot, error) {
	resp, err := c.api.CreateSnapshotWithResponse(ctx, id, rest.CreateSnapshotJSONRequestBody{Name: optional(name)})
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return Snapshot{}, err
	}
	return Snapshot{ID: resp.JSON201.SnapshotID, Names: resp.JSON201.Names}, nil
}

// ListSnapshots lists the snapshots, of one sandbox when sandboxID is set.
func (c *Client) ListSnapshots(ctx context.Context, sandboxID string) ([]Snapshot, error) {
	resp, err := c.api.ListSnapshotsWithResponse(ctx, &rest.ListSnapshotsParams{SandboxID: optional(sandboxID)})
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	var out []Snapshot
	for _, s := range *resp.JSON200 {
		out = append(out, Snapshot{ID: s.SnapshotID, Names: s.Names})
	}
	return out, nil
}

// Fork starts count copies of a running sandbox (memory, disk and
// processes), each living timeout (0: the server's default). One copy
// failing does not undo the others: each result has a sandbox or an
// error.
func (c *Client) Fork(ctx context.Context, id string, count int, timeout time.Duration) ([]ForkResult, error) {
	body := rest.ForkSandboxJSONRequestBody{}
	if count > 0 {
		body.Count = &count
	}
	body.Timeout = seconds(timeout)
	resp, err := c.api.ForkSandboxWithResponse(ctx, id, body)
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return nil, err
	}
	var out []ForkResult
	for _, r := range *resp.JSON201 {
		var fr ForkResult
		if r.Sandbox != nil {
			fr.Sandbox = c.sandbox(r.Sandbox)
		}
		if r.Error != nil {
			fr.Err = &APIError{Status: int(r.Error.Code), Message: r.Error.Message}
		}
		out = append(out, fr)
	}
	return out, nil
}

// ForkResult is one copy of a Fork: a sandbox, or why it failed.
type ForkResult struct {
	Sandbox *Sandbox
	Err     error
}

// Metric is one sample of a sandbox's use.
type Metric struct {
	Time                        time.Time
	CPUCount                    int
	CPUUsedPct                  float64
	MemUsed, MemTotal, MemCache int64 // bytes
	DiskUsed, DiskTotal         int64 // bytes
}

// GetMetrics returns a sandbox's samples between start and end (zero: the
// server's defaults, its whole history).
func (c *Client) GetMetrics(ctx context.Context, id string, start, end time.Time) ([]Metric, error) {
	var p rest.GetSandboxMetricsParams
	if !start.IsZero() {
		s := start.Unix()
		p.Start = &s
	}
	if !end.IsZero() {
		e := end.Unix()
		p.End = &e
	}
	resp, err := c.api.GetSandboxMetricsWithResponse(ctx, id, &p)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	var out []Metric
	for _, m := range *resp.JSON200 {
		out = append(out, Metric{Time: m.Timestamp, CPUCount: m.CPUCount, CPUUsedPct: m.CPUUsedPct, MemUsed: m.MemUsed,
			MemTotal: m.MemTotal, MemCache: m.MemCache, DiskUsed: m.DiskUsed, DiskTotal: m.DiskTotal})
	}
	return out, nil
}

// LogEntry is one line of a sandbox's log: its processes' output and
// what warren did to it.
type LogEntry struct {
	Time    time.Time
	Level   string
	Message string
	Fields  map[string]string
}

// LogOptions page through a sandbox's log: entries after Cursor (zero:
// from the start), at most Limit (0: the server's page).
type LogOptions struct {
	Cursor time.Time
	Limit  int
}

// GetLogs returns a page of a sandbox's log, oldest first.
func (c *Client) GetLogs(ctx context.Context, id string, o LogOptions) ([]LogEntry, error) {
	forward := rest.GetSandboxLogsParamsDirectionForward
	p := rest.GetSandboxLogsParams{Direction: &forward}
	if !o.Cursor.IsZero() {
		cur := o.Cursor.UnixMilli()
		p.Cursor = &cur
	}
	if o.Limit > 0 {
		p.Limit = &o.Limit
	}
	resp, err := c.api.GetSandboxLogsWithResponse(ctx, id, &p)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	var out []LogEntry
	for _, l := range resp.JSON200.Logs {
		out = append(out, LogEntry{Time: l.Timestamp, Level: string(l.Level), Message: l.Message, Fields: l.Fields})
	}
	return out, nil
}

// Network is a sandbox's egress policy: what it may reach besides what
// the server always allows.
type Network struct {
	// AllowOut lists addresses, CIDR ranges or domains always allowed.
	AllowOut []string
	// DenyOut lists addresses or ranges refused ("0.0.0.0/0": all but
	// AllowOut).
	DenyOut []string
}

// UpdateNetwork replaces a running sandbox's egress policy.
func (c *Client) UpdateNetwork(ctx context.Context, id string, n Network) error {
	body := rest.UpdateSandboxNetworkJSONRequestBody{AllowOut: nonEmpty(n.AllowOut), DenyOut: nonEmpty(n.DenyOut)}
	resp, err := c.api.UpdateSandboxNetworkWithResponse(ctx, id, body)
	return answer(resp, err, http.StatusNoContent)
}

func nonEmpty(xs []string) *[]string {
	if len(xs) == 0 {
		return nil
	}
	return &xs
}
