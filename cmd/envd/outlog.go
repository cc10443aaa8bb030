package main

import (
	"bytes"
	"log/slog"
	"sync"
)

// maxOutputLine is the longest start-command line logged as one record;
// longer output is split, so a record stays well below what the host's log
// reader takes (sandboxlog.MaxLine).
const maxOutputLine = 16 << 10

// outputLog logs each line the start command writes as one record of
// envd's logger. envd's stdout is the sandbox's log on the host, so the
// output arrives there dated, levelled and one line per entry, instead of
// raw bytes between envd's own records.
type outputLog struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func newOutputLog(l *slog.Logger, stream string) *outputLog {
	return &outputLog{log: l.With("tag", "startCmd", "stream", stream)}
}

func (o *outputLog) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	for {
		i := bytes.IndexByte(o.buf, '\n')
		if i < 0 {
			break
		}
		o.emit(o.buf[:i])
		o.buf = o.buf[i+1:]
	}
	for len(o.buf) > maxOutputLine {
		o.log.Info(text(o.buf[:maxOutputLine]))
		o.buf = o.buf[maxOutputLine:]
	}
	// Keep the buffer from growing with every partial write.
	o.buf = append([]byte(nil), o.buf...)
	return len(p), nil
}

// Close logs a last line that has no newline.
func (o *outputLog) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.buf) > 0 {
		o.emit(o.buf)
		o.buf = nil
	}
	return nil
}

// emit logs one line at info: a program's stderr is as often its progress
// as its errors, and E2B marks the start command's output the same way.
func (o *outputLog) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	for len(line) > maxOutputLine {
		o.log.Info(text(line[:maxOutputLine]))
		line = line[maxOutputLine:]
	}
	o.log.Info(text(line))
}

func text(b []byte) string { return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))) }
