package warren

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DefaultRunCodeTimeout bounds a RunCode whose options set no Timeout, as
// E2B's Python SDK does.
const DefaultRunCodeTimeout = 300 * time.Second

// RunCodeOptions are a RunCode's settings; the zero value runs Python in
// the sandbox's default context with DefaultRunCodeTimeout.
type RunCodeOptions struct {
	// Language picks that language's default context: "python" (the
	// default), "javascript", "typescript", "r", "java" or "bash", as the
	// template has kernels for them. Set it or Context, not both.
	Language string
	// Context runs the code in a context CreateCodeContext made, with the
	// state earlier runs there left.
	Context *CodeContext
	// Envs are environment variables for this run only.
	Envs map[string]string
	// Timeout bounds the whole run, output included (0:
	// DefaultRunCodeTimeout; negative: none but ctx's). When it passes the
	// request is abandoned and the server interrupts the kernel; the
	// context keeps its state.
	Timeout time.Duration

	// The callbacks see the run's events as they stream in, in order, on
	// the goroutine that called RunCode. They may be nil.
	OnStdout, OnStderr func(OutputMessage)
	OnResult           func(Result)
	OnError            func(ExecutionError)
}

// OutputMessage is one piece of a run's stdout or stderr, as it streamed.
type OutputMessage struct {
	Line      string    // the text, usually ending in "\n"
	Timestamp time.Time // when the kernel wrote it
	Error     bool      // it came from stderr
}

// Execution is what a run of code produced. An exception in the code is
// Error, not a Go error from RunCode.
type Execution struct {
	// Results are the rich outputs, display() calls and the value of the
	// last expression (IsMainResult), in order.
	Results []Result
	Logs    Logs
	// Error is the code's uncaught exception, or nil.
	Error *ExecutionError
	// ExecutionCount is the kernel's execution counter (IPython's In[n]).
	ExecutionCount int
}

// Text is the text of the main result (the value of the cell's last
// expression), or "" when there is none, like E2B's execution.text.
func (e *Execution) Text() string {
	for _, r := range e.Results {
		if r.IsMainResult {
			return r.Text
		}
	}
	return ""
}

// Logs is a run's output, one element per streamed piece.
type Logs struct {
	Stdout, Stderr []string
}

// ExecutionError is an exception the code raised (or a kernel that died
// during the run: name "ContextRestarting"). It implements error so that
// a caller may return it as one.
type ExecutionError struct {
	Name      string `json:"name"`      // the exception's class, e.g. "ZeroDivisionError"
	Value     string `json:"value"`     // its message
	Traceback string `json:"traceback"` // the formatted traceback
}

// Error is "Name: Value", as Python prints an exception.
func (e *ExecutionError) Error() string { return e.Name + ": " + e.Value }

// executeRequest is the body of POST /execute (E2B protocol §4.2).
type executeRequest struct {
	Code      string            `json:"code"`
	ContextID string            `json:"context_id,omitempty"`
	Language  string            `json:"language,omitempty"`
	EnvVars   map[string]string `json:"env_vars,omitempty"`
}

// RunCode runs code in the sandbox's code interpreter (templates built on
// code-interpreter-v1) and returns what it produced, as E2B's runCode
// does. An exception in the code is Execution.Error; a Go error means the
// run could not be done or followed: a missing context (ErrNotFound), a
// sandbox that is gone (ErrNotFound), the Timeout (ErrTimeout and
// context.DeadlineExceeded). After an error while streaming, the returned
// Execution holds what arrived before it.
func (s *Sandbox) RunCode(ctx context.Context, code string, o RunCodeOptions) (*Execution, error) {
	if o.Language != "" && o.Context != nil {
		return nil, fmt.Errorf("warren: running code: %w: set Language or Context, not both", ErrInvalid)
	}
	body := executeRequest{Code: code, Language: o.Language, EnvVars: o.Envs}
	if o.Context != nil {
		body.ContextID = o.Context.ID
	}
	d := o.Timeout
	if d == 0 {
		d = DefaultRunCodeTimeout
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, d)
		defer cancel()
	}
	resp, err := s.interpreterDo(runCtx, http.MethodPost, "/execute", body)
	if err != nil {
		return nil, runCodeError(ctx, runCtx, d, err)
	}
	defer resp.Body.Close()
	ex := &Execution{}
	if err := readExecution(resp.Body, ex, &o); err != nil {
		return ex, runCodeError(ctx, runCtx, d, err)
	}
	return ex, nil
}

// runCodeError tells the caller's own cancellation from RunCode's Timeout
// and both from a failed request.
func runCodeError(parent, ctx context.Context, d time.Duration, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("warren: running code: %w", parent.Err())
	case ctx.Err() != nil:
		return fmt.Errorf("warren: running code: %w after %v (%w)", ErrTimeout, d, context.DeadlineExceeded)
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return err
	}
	return fmt.Errorf("warren: running code: %w", err)
}

// readExecution applies the /execute stream's lines to ex until the
// stream ends (E2B protocol §4.3): EOF ends the run, not end_of_execution.
func readExecution(r io.Reader, ex *Execution, o *RunCodeOptions) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := ex.apply(line, o); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the execution stream: %w", err)
		}
	}
}

// streamEvent is any line of the /execute stream; a result line is
// decoded again as a Result.
type streamEvent struct {
	Type           string `json:"type"`
	Text           string `json:"text"`
	Timestamp      string `json:"timestamp"`
	ExecutionCount int    `json:"execution_count"`
	ExecutionError
}

// apply adds one stream line to ex and calls its callback. keepalive,
// end_of_execution and types this SDK does not know are ignored.
func (ex *Execution) apply(line []byte, o *RunCodeOptions) error {
	var ev streamEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return fmt.Errorf("reading the execution stream: %w", err)
	}
	switch ev.Type {
	case "stdout", "stderr":
		msg := OutputMessage{Line: ev.Text, Error: ev.Type == "stderr"}
		msg.Timestamp, _ = time.Parse(time.RFC3339Nano, ev.Timestamp)
		logs, cb := &ex.Logs.Stdout, o.OnStdout
		if msg.Error {
			logs, cb = &ex.Logs.Stderr, o.OnStderr
		}
		*logs = append(*logs, ev.Text)
		if cb != nil {
			cb(msg)
		}
	case "result":
		var r Result
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("reading a result: %w", err)
		}
		ex.Results = append(ex.Results, r)
		if o.OnResult != nil {
			o.OnResult(r)
		}
	case "error":
		e := ev.ExecutionError
		ex.Error = &e
		if o.OnError != nil {
			o.OnError(e)
		}
	case "number_of_executions":
		ex.ExecutionCount = ev.ExecutionCount
	}
	return nil
}
