package lifecycle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// execution is one run of a sandbox, from its create or a resume until
// it is paused or killed (E2B's sandboxExecutionId).
type execution struct {
	id      string
	start   time.Time
	buildID string // the template build it runs; "" when not known (re-adopted)
}

func newExecution(buildID string) execution {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return execution{id: hex.EncodeToString(b), start: time.Now().UTC(), buildID: buildID}
}

// emit records an event of sb, with data as its eventData (nil: none).
func (m *Manager) emit(ctx context.Context, sb *store.Sandbox, ex execution, typ string, data map[string]any) {
	if m.opts.Events == nil {
		return
	}
	var raw []byte
	if data != nil {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			log.G(ctx).Error("encoding a sandbox event's data", "sandbox", sb.ID, "type", typ, "err", err)
			raw = nil
		}
	}
	m.opts.Events.Record(ctx, &store.Event{Type: typ, SandboxID: sb.ID, TemplateID: sb.TemplateID, BuildID: ex.buildID,
		ExecutionID: ex.id, TeamID: store.TeamOf(sb.TeamID), Data: raw})
}

// executionData is E2B's eventData.execution of a paused or killed event:
// the run that just ended. Callers hold e.mu.
func executionData(e *entry) map[string]any {
	return map[string]any{
		"started_at":     e.exec.start.Format(time.RFC3339),
		"vcpu_count":     e.sb.CPUCount,
		"memory_mb":      e.sb.MemoryMB,
		"execution_time": time.Since(e.exec.start).Milliseconds(),
	}
}

// emitCreated records a new sandbox, starting its first execution.
// Callers hold e.mu.
func (m *Manager) emitCreated(ctx context.Context, e *entry, tpl *store.Template) {
	build := ""
	if tpl != nil {
		build = tpl.BuildID
	}
	e.exec = newExecution(build)
	var data map[string]any
	if len(e.sb.Metadata) > 0 {
		data = map[string]any{"sandbox_metadata": e.sb.Metadata}
	}
	m.emit(ctx, e.sb, e.exec, store.EventCreated, data)
}

// emitResumed records a resume, which starts a new execution. Callers
// hold e.mu.
func (m *Manager) emitResumed(ctx context.Context, e *entry) {
	e.exec = newExecution(e.exec.buildID)
	m.emit(ctx, e.sb, e.exec, store.EventResumed, nil)
}

// emitTimeout records a new end time. Callers hold e.mu.
func (m *Manager) emitTimeout(ctx context.Context, e *entry) {
	m.emit(ctx, e.sb, e.exec, store.EventUpdated, map[string]any{"set_timeout": e.sb.EndAt.UTC().Format(time.RFC3339)})
}

// emitKilled records a kill and why. A running sandbox's execution ends
// with it. Callers hold e.mu.
func (m *Manager) emitKilled(ctx context.Context, e *entry, reason string) {
	if reason == sandbox.KillNodeLost {
		return // the API role recorded it when it reaped the record
	}
	data := map[string]any{"reason": reason}
	if e.sb.State == store.SandboxRunning {
		data["execution"] = executionData(e)
	}
	m.emit(ctx, e.sb, e.exec, store.EventKilled, data)
}
