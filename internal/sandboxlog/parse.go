package sandboxlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// Parse turns one line into an entry. timed says whether the line carried
// its own time: a JSON record of log/slog (time, level, msg and attributes),
// or a line of slog's text format (time=… level=… msg=…), as envd wrote
// before its records became JSON. Anything else is an info entry whose
// message is the whole line, to be dated by its neighbours.
func Parse(line []byte) (e Entry, timed bool) {
	raw := string(bytes.ToValidUTF8(line, []byte("\uFFFD")))
	e = Entry{Level: "info", Message: raw, Fields: map[string]string{}, Raw: raw}
	switch {
	case strings.HasPrefix(raw, "{"):
		return parseJSON(e)
	case strings.HasPrefix(raw, "time="):
		return parseText(e)
	}
	return e, false
}

func parseJSON(e Entry) (Entry, bool) {
	var rec map[string]any
	dec := json.NewDecoder(strings.NewReader(e.Raw))
	dec.UseNumber()
	if dec.Decode(&rec) != nil {
		return e, false
	}
	var timed bool
	for k, v := range rec {
		s := flatten(v)
		switch k {
		case "time", "timestamp":
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				e.Timestamp, timed = t, true
				continue
			}
		case "level":
			e.Level = normalLevel(s)
			continue
		case "msg", "message":
			e.Message = s
			continue
		}
		e.Fields[k] = s
	}
	return e, timed
}

// flatten renders a JSON value as E2B's string-valued fields hold it.
func flatten(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// parseText reads the time and level of a slog text line; the rest of the
// line (msg=… and the attributes) is the message.
func parseText(e Entry) (Entry, bool) {
	ts, rest, _ := strings.Cut(strings.TrimPrefix(e.Raw, "time="), " ")
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return e, false
	}
	e.Timestamp = t
	if lvl, after, ok := strings.Cut(rest, " "); ok && strings.HasPrefix(lvl, "level=") {
		e.Level, rest = normalLevel(strings.TrimPrefix(lvl, "level=")), after
	}
	e.Message = rest
	return e, true
}

// normalLevel maps slog's level names (INFO, WARN+2, …) and common others
// to E2B's four.
func normalLevel(s string) string {
	s = strings.ToLower(s)
	switch {
	case strings.HasPrefix(s, "debug"), strings.HasPrefix(s, "trace"):
		return "debug"
	case strings.HasPrefix(s, "warn"):
		return "warn"
	case strings.HasPrefix(s, "err"), strings.HasPrefix(s, "fatal"),
		strings.HasPrefix(s, "panic"), strings.HasPrefix(s, "crit"):
		return "error"
	default:
		return "info"
	}
}
