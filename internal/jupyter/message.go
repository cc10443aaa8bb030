// Package jupyter drives real Jupyter kernels (ipykernel, Deno's kernel,
// bash_kernel...) over the Jupyter messaging protocol on ZeroMQ, in pure Go:
// it launches a kernel process with a connection file, signs and sends
// requests on the shell and control channels, and delivers the iopub
// messages that belong to each request. The code interpreter server
// (internal/interpreter) is its only user.
package jupyter

import (
	"encoding/json"
	"time"
)

// Header is a Jupyter message header.
type Header struct {
	MsgID    string    `json:"msg_id"`
	Session  string    `json:"session"`
	Username string    `json:"username"`
	Date     time.Time `json:"date"`
	MsgType  string    `json:"msg_type"`
	Version  string    `json:"version"`
}

// Message is one Jupyter message. Content stays raw: callers decode the
// fields of the message types they handle.
type Message struct {
	Header       Header          `json:"header"`
	ParentHeader json.RawMessage `json:"parent_header"`
	Metadata     json.RawMessage `json:"metadata"`
	Content      json.RawMessage `json:"content"`
	// Buffers are the raw binary frames after content (used by widgets and
	// some display formats); most messages have none.
	Buffers [][]byte `json:"-"`
	// Dropped is the size of the parts of this message that were over the
	// size limit and discarded; its content is then empty.
	Dropped uint64 `json:"-"`
}

// Type is the message's msg_type ("stream", "execute_result", ...).
func (m *Message) Type() string { return m.Header.MsgType }

// UnmarshalJSON decodes a header, tolerating a missing or malformed date:
// kernels other than ipykernel format it loosely, and no caller should lose
// a message over a timestamp.
func (h *Header) UnmarshalJSON(b []byte) error {
	var raw struct {
		MsgID    string `json:"msg_id"`
		Session  string `json:"session"`
		Username string `json:"username"`
		Date     string `json:"date"`
		MsgType  string `json:"msg_type"`
		Version  string `json:"version"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*h = Header{MsgID: raw.MsgID, Session: raw.Session, Username: raw.Username, MsgType: raw.MsgType, Version: raw.Version}
	if t, err := time.Parse(time.RFC3339Nano, raw.Date); err == nil {
		h.Date = t
	}
	return nil
}

// ParentID is the msg_id of the request this message answers, or "".
func (m *Message) ParentID() string {
	var p struct {
		MsgID string `json:"msg_id"`
	}
	if len(m.ParentHeader) == 0 || json.Unmarshal(m.ParentHeader, &p) != nil {
		return ""
	}
	return p.MsgID
}

// Decode unmarshals the message's content into v (one of the *Content types
// below, or the caller's own).
func (m *Message) Decode(v any) error { return json.Unmarshal(m.Content, v) }

// StatusContent is the content of an iopub "status" message.
type StatusContent struct {
	ExecutionState string `json:"execution_state"` // "busy", "idle", "starting"
}

// StreamContent is the content of an iopub "stream" message.
type StreamContent struct {
	Name string `json:"name"` // "stdout" or "stderr"
	Text string `json:"text"`
}

// DataContent is the content of "execute_result" and "display_data".
type DataContent struct {
	Data           map[string]json.RawMessage `json:"data"`
	Metadata       map[string]json.RawMessage `json:"metadata"`
	ExecutionCount int                        `json:"execution_count,omitempty"` // execute_result only
}

// ErrorContent is the content of an iopub "error" message; execute_reply
// with status "error" carries the same fields.
type ErrorContent struct {
	EName     string   `json:"ename"`
	EValue    string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

// ExecuteInputContent is the content of an iopub "execute_input" message.
type ExecuteInputContent struct {
	Code           string `json:"code"`
	ExecutionCount int    `json:"execution_count"`
}

// ExecuteReplyContent is the content of a shell "execute_reply".
type ExecuteReplyContent struct {
	Status         string `json:"status"` // "ok", "error", "aborted"
	ExecutionCount int    `json:"execution_count"`
	ErrorContent
}
