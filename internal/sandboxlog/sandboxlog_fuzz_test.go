package sandboxlog

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzRead reads arbitrary bytes as a sandbox's log: a sandbox writes it,
// so any byte may be there. Every entry is valid UTF-8 with one of E2B's
// levels, a line still being written is never returned, and reading
// backward gives exactly the forward entries, newest first, dated alike.
func FuzzRead(f *testing.F) {
	fallback := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range []string{
		`{"time":"2026-01-02T03:04:05.123Z","level":"WARN+2","msg":"hi","n":1.50,"o":{"a":[1]},"z":null}` + "\nplain\n",
		"time=2026-01-02T03:04:05Z level=ERROR msg=x a=b\nundated\n{\"time\":\"bad\",\"message\":\"m\"}\npartial",
		"\xff\xfe{\n{\"level\":7}\n\n\n{\"timestamp\":\"2026-01-02T03:04:05+02:00\"}\n",
		strings.Repeat("x", MaxLine-1) + "\n" + strings.Repeat("y", MaxLine) + "\n" + strings.Repeat("z", MaxLine+1) + "\nend\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		q := Query{Limit: 1 << 20, Fallback: fallback}
		fwd, err := Read(bytes.NewReader(log), q)
		if err != nil {
			t.Fatalf("forward: %v", err)
		}
		q.Backward = true
		bwd, err := Read(bytes.NewReader(log), q)
		if err != nil {
			t.Fatalf("backward: %v", err)
		}
		complete := 0
		if i := bytes.LastIndexByte(log, '\n'); i >= 0 {
			complete = i + 1
		}
		for _, e := range fwd {
			checkEntry(t, e)
			if strings.Contains(e.Raw, "\n") || !bytes.Contains(log[:complete], []byte(e.Raw)) && utf8.Valid(log) {
				t.Fatalf("entry %q is not a complete line of the log", e.Raw)
			}
		}
		slices.Reverse(bwd)
		if len(fwd) != len(bwd) {
			t.Fatalf("forward read %d entries, backward %d", len(fwd), len(bwd))
		}
		for i := range fwd {
			if fwd[i].Raw != bwd[i].Raw || !fwd[i].Timestamp.Equal(bwd[i].Timestamp) {
				t.Fatalf("entry %d: forward %q at %v, backward %q at %v", i, fwd[i].Raw, fwd[i].Timestamp, bwd[i].Raw, bwd[i].Timestamp)
			}
		}
		for limit := range 3 {
			q := Query{Limit: limit, Fallback: fallback}
			if got, _ := Read(bytes.NewReader(log), q); len(got) > limit {
				t.Fatalf("limit %d returned %d entries", limit, len(got))
			}
		}
	})
}

func checkEntry(t *testing.T, e Entry) {
	t.Helper()
	if !ValidLevel(e.Level) {
		t.Fatalf("level %q of %q", e.Level, e.Raw)
	}
	if !utf8.ValidString(e.Raw) || !utf8.ValidString(e.Message) {
		t.Fatalf("entry %q is not valid UTF-8", e.Raw)
	}
	for k, v := range e.Fields {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			t.Fatalf("field %q=%q of %q is not valid UTF-8", k, v, e.Raw)
		}
	}
	if e.Timestamp.IsZero() {
		t.Fatalf("entry %q has no time", e.Raw)
	}
}
