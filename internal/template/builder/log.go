package builder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
)

// maxEntries bounds one build's log: a step printing without end must not
// fill the server's memory or disk.
const maxEntries = 50000

// maxLine is the longest line kept; longer output is split.
const maxLine = 8 << 10

// maxMemBytes bounds the lines a running build keeps in memory; older
// ones are read back from its file.
const maxMemBytes = 1 << 20

// Log is a build's log: appended to a JSON-lines file so it outlives the
// build and the server, its newest lines (up to maxMemBytes) also kept in
// memory while the build runs.
type Log struct {
	mu       sync.Mutex
	path     string
	entries  []wire.BuildLogEntry // lines base.. of the log
	base     int
	total    int
	memBytes int
	f        *os.File
	dropped  bool
}

// newLog creates the log file at path (truncating an older one).
func newLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating build log: %w", err)
	}
	return &Log{f: f, path: path}, nil
}

// readLog loads a finished build's log file.
func readLog(path string) ([]wire.BuildLogEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading build log: %w", err)
	}
	var out []wire.BuildLogEntry
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		var e wire.BuildLogEntry
		if len(line) > 0 && json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

func (l *Log) add(level, step, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= maxEntries {
		if !l.dropped {
			l.dropped = true
			l.appendLocked(wire.BuildLogEntry{Timestamp: time.Now().UTC(), Level: "warn", Message: "[log truncated: more lines follow than are kept]", Step: step})
		}
		return
	}
	l.appendLocked(wire.BuildLogEntry{Timestamp: time.Now().UTC(), Level: level, Message: msg, Step: step})
}

func (l *Log) appendLocked(e wire.BuildLogEntry) {
	l.entries = append(l.entries, e)
	l.total++
	l.memBytes += entrySize(e)
	for l.memBytes > maxMemBytes && len(l.entries) > 1 {
		l.memBytes -= entrySize(l.entries[0])
		l.entries[0] = wire.BuildLogEntry{}
		l.entries = l.entries[1:]
		l.base++
	}
	if l.f != nil {
		data, _ := json.Marshal(e)
		_, _ = l.f.Write(append(data, '\n'))
	}
}

// entrySize is about what e takes in memory.
func entrySize(e wire.BuildLogEntry) int { return len(e.Message) + len(e.Step) + len(e.Level) + 64 }

// Infof logs an informational line.
func (l *Log) Infof(step, format string, args ...any) {
	l.add("info", step, fmt.Sprintf(format, args...))
}

// Errorf logs an error line.
func (l *Log) Errorf(step, format string, args ...any) {
	l.add("error", step, fmt.Sprintf(format, args...))
}

// Entries returns a copy of the lines from offset on.
func (l *Log) Entries(offset int) []wire.BuildLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	offset = max(offset, 0)
	if offset >= l.total {
		return nil
	}
	if offset >= l.base {
		return append([]wire.BuildLogEntry(nil), l.entries[offset-l.base:]...)
	}
	// Lines no longer in memory come from the file, which has them all.
	all, err := readLog(l.path)
	if err != nil || offset >= len(all) {
		return append([]wire.BuildLogEntry(nil), l.entries...)
	}
	return all[offset:]
}

// Len is the number of lines so far.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Since returns at most the last n lines from index from on.
func (l *Log) Since(from, n int) []wire.BuildLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	from = max(from, l.total-n, l.base)
	if from >= l.total {
		return nil
	}
	return append([]wire.BuildLogEntry(nil), l.entries[from-l.base:]...)
}

func (l *Log) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// writer returns an io.Writer that logs each line of a step's output.
func (l *Log) writer(step string) *lineWriter { return &lineWriter{log: l, step: step} }

// lineWriter splits a command's output into log lines.
type lineWriter struct {
	log  *Log
	step string
	buf  []byte
}

var _ io.Writer = (*lineWriter)(nil)

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	for len(w.buf) > maxLine {
		w.emit(w.buf[:maxLine])
		w.buf = w.buf[maxLine:]
	}
	return len(p), nil
}

// Flush logs a last line without a newline.
func (w *lineWriter) Flush() {
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

func (w *lineWriter) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	w.log.add("info", w.step, string(bytes.ToValidUTF8(line, []byte("\uFFFD"))))
}

// lastLines joins log lines for an error message.
func lastLines(entries []wire.BuildLogEntry) string {
	if len(entries) == 0 {
		return "(no output)"
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	for _, e := range entries {
		fmt.Fprintln(w, e.Message)
	}
	_ = w.Flush()
	return b.String()
}
