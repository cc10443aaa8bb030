package interpreter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"
)

// Event types of the /execute NDJSON stream (spec §4.3).
const (
	evStdout     = "stdout"
	evStderr     = "stderr"
	evResult     = "result"
	evError      = "error"
	evCount      = "number_of_executions"
	evKeepalive  = "keepalive"
	evEndOfExec  = "end_of_execution"
	timestampFmt = "2006-01-02T15:04:05.000000Z" // microseconds: Python's fromisoformat and JS Date both parse it
)

type outputEvent struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Timestamp string `json:"timestamp"`
}

type errorEvent struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
}

type countEvent struct {
	Type           string `json:"type"`
	ExecutionCount int    `json:"execution_count"`
}

type typeEvent struct {
	Type string `json:"type"`
}

// stream writes one execution's NDJSON lines to the client. Output is
// forwarded as it arrives, never accumulated, so memory stays bounded by one
// line; a line too long is split and an execution past maxOutput is cut
// with one marker line while the kernel keeps being drained.
type stream struct {
	maxLine   int
	maxOutput int64
	w         io.Writer
	flush     func()

	mu        sync.Mutex // mu protects the fields below and serialises writes
	buf       bytes.Buffer
	last      time.Time
	total     int64
	truncated bool
	gone      bool // the client left or a write failed: drop everything
}

func newStream(w io.Writer, flush func(), maxLine int, maxOutput int64) *stream {
	if flush == nil {
		flush = func() {}
	}
	return &stream{w: w, flush: flush, maxLine: maxLine, maxOutput: maxOutput, last: time.Now()}
}

// output writes stdout or stderr text, split into lines of at most maxLine
// bytes of text (on rune boundaries).
func (s *stream) output(typ, text string, ts time.Time) {
	if ts.IsZero() {
		ts = time.Now()
	}
	stamp := ts.UTC().Format(timestampFmt)
	for _, chunk := range splitText(text, s.maxLine) {
		s.write(outputEvent{Type: typ, Text: chunk, Timestamp: stamp}, true)
	}
}

// result writes a result line; it counts against maxOutput.
func (s *stream) result(ev map[string]any) { s.write(ev, true) }

// errorLine writes an error; errors are never cut by the output cap because
// the SDK needs them to report the failure.
func (s *stream) errorLine(name, value, traceback string) {
	if s.maxLine > 0 && len(traceback) > s.maxLine {
		traceback = traceback[:s.maxLine] + "\n[traceback truncated]"
	}
	s.write(errorEvent{Type: evError, Name: name, Value: value, Traceback: traceback}, false)
}

func (s *stream) count(n int) { s.write(countEvent{Type: evCount, ExecutionCount: n}, false) }

func (s *stream) end() { s.write(typeEvent{Type: evEndOfExec}, false) }

// abandon drops every later write: the client is gone.
func (s *stream) abandon() {
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
}

func (s *stream) write(v any, capped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone || (capped && s.truncated) {
		return
	}
	s.buf.Reset()
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false) // html results stay readable; still valid JSON
	if err := enc.Encode(v); err != nil {
		return // every event type here is marshalable; nothing to send
	}
	if capped && s.maxOutput > 0 && s.total+int64(s.buf.Len()) > s.maxOutput {
		s.truncated = true
		s.buf.Reset()
		marker := fmt.Sprintf("[output truncated: this execution produced more than %s of output; the rest was discarded]\n", byteSize(s.maxOutput))
		_ = json.NewEncoder(&s.buf).Encode(outputEvent{Type: evStderr, Text: marker, Timestamp: time.Now().UTC().Format(timestampFmt)})
	}
	s.total += int64(s.buf.Len())
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		s.gone = true
		return
	}
	s.flush()
	s.last = time.Now()
}

// keepalive writes a keepalive line after every interval of silence, so a
// client that went away is noticed by a failing write. stop waits for the
// goroutine, so no keepalive can follow end_of_execution.
func (s *stream) keepalive(interval time.Duration) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			s.mu.Lock()
			wait, gone := interval-time.Since(s.last), s.gone
			s.mu.Unlock()
			if gone {
				<-done
				return
			}
			if wait <= 0 {
				s.write(typeEvent{Type: evKeepalive}, false)
				continue
			}
			t := time.NewTimer(wait)
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-exited }
}

// splitText cuts text into pieces of at most max bytes without splitting a
// UTF-8 sequence. max <= 0 means no limit.
func splitText(text string, max int) []string {
	if max <= 0 || len(text) <= max {
		return []string{text}
	}
	var parts []string
	for len(text) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		if cut == 0 {
			cut = max // not UTF-8 at all: cut anywhere, JSON encoding repairs it
		}
		parts = append(parts, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		parts = append(parts, text)
	}
	return parts
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
