package wire

import (
	"encoding/json"
	"time"
)

// BuildLogEntry is one build log line, as the builder keeps it and the
// build status and logs report it.
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
