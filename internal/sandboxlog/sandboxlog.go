// Package sandboxlog reads a sandbox's log into E2B's log entries. The log
// is what the sandbox's envd writes to its standard output: one JSON record
// per line (its own records, and one per line of the template's start
// command's output), which the runtime keeps on the host. Queries pick
// entries by time, level and substring the way E2B's logs endpoints do,
// and read only the end of a large log, never all of it into memory.
package sandboxlog

import (
	"strings"
	"time"
)

// Entry is one log line, as E2B's SandboxLogEntry shows it.
type Entry struct {
	Timestamp time.Time
	Level     string // debug, info, warn or error
	Message   string
	// Fields are the record's other attributes, as strings.
	Fields map[string]string
	// Raw is the line as written (E2B's deprecated SandboxLog.line).
	Raw string
}

// The levels, lowest first.
var levels = map[string]int{"debug": 0, "info": 1, "warn": 2, "error": 3}

// ValidLevel reports whether s is one of E2B's LogLevel values.
func ValidLevel(s string) bool {
	_, ok := levels[s]
	return ok
}

// AtLeast reports whether level is min or above; an unknown level counts
// as info, as E2B's reader treats a line without one.
func AtLeast(level, min string) bool {
	l, ok := levels[level]
	if !ok {
		l = levels["info"]
	}
	return l >= levels[min]
}

// Query selects entries, as E2B's v2 logs endpoint does.
type Query struct {
	// Cursor bounds the time: forward, entries at or after it; backward,
	// at or before it. Zero: no bound.
	Cursor time.Time
	// Backward returns the newest entries first; forward, the oldest.
	Backward bool
	// Limit is the most entries returned; 0 returns none.
	Limit int
	// Level is the lowest level returned; "" returns all.
	Level string
	// Search keeps entries whose message contains it (case-sensitive).
	Search string
	// Fallback is the time of a line that carries none and follows no
	// line that does (output of an older envd, or of the runtime itself).
	Fallback time.Time
}

// Matches reports whether an entry with this time, level and message is
// selected, whatever the limit.
func (q Query) Matches(ts time.Time, level, message string) bool {
	if !q.Cursor.IsZero() {
		if q.Backward && ts.After(q.Cursor) || !q.Backward && ts.Before(q.Cursor) {
			return false
		}
	}
	if q.Level != "" && !AtLeast(level, q.Level) {
		return false
	}
	return q.Search == "" || strings.Contains(message, q.Search)
}

// Filter applies q to entries held in memory, oldest first.
func Filter(entries []Entry, q Query) []Entry {
	out := []Entry{}
	for i := range entries {
		if len(out) >= q.Limit {
			break
		}
		e := entries[i]
		if q.Backward {
			e = entries[len(entries)-1-i]
		}
		if q.Matches(e.Timestamp, e.Level, e.Message) {
			out = append(out, e)
		}
	}
	return out
}
