package interpreter

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/warren-sandbox/warren/internal/jupyter"
)

// mimeKeys maps the MIME types the SDKs know to their result keys (spec
// §4.3); every other MIME type goes into "extra".
var mimeKeys = map[string]string{
	"text/plain":             "text",
	"text/html":              "html",
	"text/markdown":          "markdown",
	"image/svg+xml":          "svg",
	"image/png":              "png",
	"image/jpeg":             "jpeg",
	"application/pdf":        "pdf",
	"text/latex":             "latex",
	"application/json":       "json",
	"application/javascript": "javascript",
	"e2b/data":               "data",
	"e2b/chart":              "chart",
}

// converter turns the iopub messages of one request into stream events, as
// the reference server's messaging.py does.
type converter struct {
	out *stream

	mu       sync.Mutex // mu protects the fields below; held while a message is handled
	sawError bool       // an iopub error was sent, so the reply's copy is not
	closed   bool       // the execution is over for the client: ignore late messages
}

// close makes later messages no-ops, so nothing can follow end_of_execution
// even if the kernel call outlives the request. It waits for a message
// being handled.
func (c *converter) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// handle is the onMsg callback given to Kernel.Execute.
func (c *converter) handle(m *jupyter.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if m.Dropped > 0 {
		// The kernel sent more in one message than warren keeps in memory
		// (a single huge print or display); say so where the output went.
		c.out.output(evStderr, fmt.Sprintf("[output dropped: the kernel sent %s in one %s message, over the %s limit; print it in smaller parts or write it to a file]\n",
			byteSize(int64(m.Dropped)), m.Type(), byteSize(jupyter.MaxMessageSize)), m.Header.Date)
	}
	switch m.Type() {
	case "stream":
		var ct struct {
			Name string `json:"name"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &ct) == nil && ct.Text != "" {
			typ := evStdout
			if ct.Name == "stderr" {
				typ = evStderr
			}
			c.out.output(typ, ct.Text, m.Header.Date)
		}
	case "execute_input":
		var ct struct {
			ExecutionCount int `json:"execution_count"`
		}
		if json.Unmarshal(m.Content, &ct) == nil {
			c.out.count(ct.ExecutionCount)
		}
	case "execute_result", "display_data":
		var ct struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if json.Unmarshal(m.Content, &ct) == nil {
			c.out.result(resultEvent(ct.Data, m.Type() == "execute_result"))
		}
	case "error":
		c.sawError = true
		name, value, tb := decodeError(m.Content)
		c.out.errorLine(name, value, tb)
	}
}

// reply reports what only the execute_reply says: an error that iopub did
// not carry, or a request the kernel aborted.
func (c *converter) reply(m *jupyter.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m == nil || c.closed {
		return
	}
	var ct struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(m.Content, &ct) != nil {
		return
	}
	switch ct.Status {
	case "error":
		if !c.sawError {
			c.sawError = true
			c.out.errorLine(decodeError(m.Content))
		}
	case "aborted":
		c.sawError = true
		c.out.errorLine("ExecutionAborted", "the kernel aborted this execution because an earlier one failed or was interrupted", "")
	}
}

func decodeError(content json.RawMessage) (name, value, traceback string) {
	var ct struct {
		Ename     string   `json:"ename"`
		Evalue    string   `json:"evalue"`
		Traceback []string `json:"traceback"`
	}
	_ = json.Unmarshal(content, &ct) // a malformed error still becomes an error line
	if ct.Ename == "" {
		ct.Ename = "Error"
	}
	return ct.Ename, ct.Evalue, strings.Join(ct.Traceback, "\n")
}

// resultEvent maps a MIME bundle to a result line. Null values are omitted.
func resultEvent(data map[string]json.RawMessage, isMain bool) map[string]any {
	ev := map[string]any{"type": evResult, "is_main_result": isMain}
	extra := map[string]any{}
	for mime, raw := range data {
		v, ok := mimeValue(raw)
		if !ok {
			continue
		}
		key, known := mimeKeys[mime]
		if !known {
			extra[mime] = v
			continue
		}
		if s, isStr := v.(string); isStr && key == "text" {
			v = stripQuotes(s)
		}
		ev[key] = v
	}
	if len(extra) > 0 {
		ev["extra"] = extra
	}
	return ev
}

// mimeValue decodes one bundle value: strings (or nbformat's list of
// strings) become Go strings so they are re-encoded as valid UTF-8; other
// JSON (json, e2b/data, e2b/chart) passes through as it is.
func mimeValue(raw json.RawMessage) (any, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var lines []string
	if json.Unmarshal(raw, &lines) == nil {
		return strings.Join(lines, ""), true
	}
	if !json.Valid(raw) {
		return nil, false
	}
	return raw, true
}

// stripQuotes removes one pair of matching surrounding quotes, as the
// reference server does for text/plain (a Python str repr is 'x').
func stripQuotes(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
