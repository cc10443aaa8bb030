package wire

import (
	"encoding/json"
	"time"
)

// Build states, as BuildStatus.Status reports them.
const (
	BuildBuilding = "building"
	BuildWaiting  = "waiting"
	BuildReady    = "ready"
	BuildError    = "error"
)

// BuildStatus is GET /templates/{templateID}/builds/{buildID}/status: a build's state and its log lines from the requested offset.
type BuildStatus struct {
	TemplateID string          `json:"templateID"`
	BuildID    string          `json:"buildID"`
	Status     string          `json:"status"`
	Logs       []string        `json:"logs"`
	LogEntries []BuildLogEntry `json:"logEntries"`
	Reason     *BuildReason    `json:"reason,omitempty"`
}

// BuildLogEntry is one build log line, as the build status and logs
// report it.
type BuildLogEntry struct {
	Timestamp time.Time `json:"timestamp"`
	Level     string    `json:"level"`
	Message   string    `json:"message"`
	// Step is the build step the line belongs to: "base", "finalize" or a
	// step number, as the SDK reads it.
	Step string `json:"step,omitempty"`
}

// UnmarshalJSON accepts the step as a string (as E2B sends it) or a number.
func (e *BuildLogEntry) UnmarshalJSON(b []byte) error {
	type plain BuildLogEntry
	var w struct {
		plain
		Step json.RawMessage `json:"step"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = BuildLogEntry(w.plain)
	e.Step = stepString(w.Step)
	return nil
}

// BuildReason explains a failed build.
type BuildReason struct {
	Message    string          `json:"message"`
	Step       string          `json:"step,omitempty"`
	LogEntries []BuildLogEntry `json:"logEntries"`
}

// UnmarshalJSON accepts the step as a string or a number.
func (r *BuildReason) UnmarshalJSON(b []byte) error {
	type plain BuildReason
	var w struct {
		plain
		Step json.RawMessage `json:"step"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = BuildReason(w.plain)
	r.Step = stepString(w.Step)
	return nil
}

func stepString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
