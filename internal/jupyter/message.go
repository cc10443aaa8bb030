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
}

// Type is the message's msg_type ("stream", "execute_result", ...).
func (m *Message) Type() string { return m.Header.MsgType }
