package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// Version is the events' schema version, E2B's "v1".
const Version = "v1"

// Category is every event's eventCategory.
const Category = "lifecycle"

// Payload is an event as the API returns it and a webhook receives it:
// E2B's field names. api/rest's SandboxEvent is the same shape (a test in
// internal/apiserver holds the two together).
type Payload struct {
	Version            string          `json:"version"`
	ID                 string          `json:"id"`
	Type               string          `json:"type"`
	EventCategory      string          `json:"eventCategory"`
	EventData          json.RawMessage `json:"eventData"`
	SandboxID          string          `json:"sandboxId"`
	SandboxExecutionID string          `json:"sandboxExecutionId,omitempty"`
	SandboxTemplateID  string          `json:"sandboxTemplateId"`
	SandboxBuildID     string          `json:"sandboxBuildId,omitempty"`
	SandboxTeamID      string          `json:"sandboxTeamId"`
	Timestamp          time.Time       `json:"timestamp"`
}

// PayloadOf renders e.
func PayloadOf(e *store.Event) Payload {
	data := json.RawMessage(e.Data)
	if data == nil {
		data = json.RawMessage("null")
	}
	return Payload{Version: Version, ID: e.ID, Type: e.Type, EventCategory: Category, EventData: data,
		SandboxID: e.SandboxID, SandboxExecutionID: e.ExecutionID, SandboxTemplateID: e.TemplateID,
		SandboxBuildID: e.BuildID, SandboxTeamID: store.TeamOf(e.TeamID), Timestamp: e.Timestamp.UTC()}
}

// Body is the JSON a webhook receives for e.
func Body(e *store.Event) ([]byte, error) {
	b, err := json.Marshal(PayloadOf(e))
	if err != nil {
		return nil, fmt.Errorf("encoding event %s: %w", e.ID, err)
	}
	return b, nil
}

// KilledOnNode is sb's killed event as a process other than its node
// records it (the cluster's API role reaping or killing on a dead node,
// a forgotten node): eventData has the reason and the node it ran on.
func KilledOnNode(sb *store.Sandbox, reason string) *store.Event {
	data, _ := json.Marshal(map[string]any{"reason": reason, "node": sb.Node})
	return &store.Event{Type: store.EventKilled, SandboxID: sb.ID, TemplateID: sb.TemplateID,
		TeamID: store.TeamOf(sb.TeamID), Data: data}
}
