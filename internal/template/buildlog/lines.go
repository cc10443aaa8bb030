package buildlog

import (
	"bytes"
	"strings"
	"sync"
)

// LineWriter calls Fn with each complete line written to it, without the
// line ending. exec.Cmd calls Write from one goroutine when Stdout and
// Stderr are the same writer.
type LineWriter struct {
	Fn  func(string)
	buf []byte
}

func (w *LineWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.Fn(strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
}

// Flush passes a final unterminated line, if any, to Fn.
func (w *LineWriter) Flush() {
	if len(w.buf) > 0 {
		w.Fn(string(w.buf))
		w.buf = nil
	}
}

// TailLines keeps the last Max lines, for error messages.
type TailLines struct {
	Max int

	mu    sync.Mutex
	lines []string
}

// Add appends s, dropping the oldest line beyond Max.
func (t *TailLines) Add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, s)
	if len(t.lines) > t.Max {
		t.lines = t.lines[len(t.lines)-t.Max:]
	}
}

// String returns the kept lines joined by newlines.
func (t *TailLines) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
