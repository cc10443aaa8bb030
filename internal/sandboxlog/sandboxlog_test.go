package sandboxlog

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// rec is a JSON line as envd's slog handler writes it, i seconds after t0.
func rec(i int, level, msg string) string {
	return fmt.Sprintf(`{"time":%q,"level":%q,"msg":%q,"component":"envd","n":%d}`+"\n",
		t0.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), level, msg, i)
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line     string
		timed          bool
		level, message string
		fields         map[string]string
	}{
		{"slog json", `{"time":"2025-03-01T12:00:00.5Z","level":"WARN","msg":"disk low","component":"envd","free":12,"ok":true,"obj":{"a":1}}`,
			true, "warn", "disk low", map[string]string{"component": "envd", "free": "12", "ok": "true", "obj": `{"a":1}`}},
		{"custom slog level", `{"time":"2025-03-01T12:00:00Z","level":"ERROR+2","msg":"x"}`, true, "error", "x", map[string]string{}},
		{"zerolog style", `{"timestamp":"2025-03-01T12:00:00Z","level":"debug","message":"y","logger":"l"}`, true, "debug", "y", map[string]string{"logger": "l"}},
		{"json without time", `{"level":"info","msg":"z"}`, false, "info", "z", map[string]string{}},
		{"slog text", `time=2025-03-01T12:00:00.000Z level=WARN msg="start command running" pid=7`, true, "warn", `msg="start command running" pid=7`, map[string]string{}},
		{"plain", `runsc: something failed`, false, "info", "runsc: something failed", map[string]string{}},
		{"broken json", `{"time":`, false, "info", `{"time":`, map[string]string{}},
		{"invalid utf-8", "a\xffb", false, "info", "a\uFFFDb", map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, timed := Parse([]byte(tc.line))
			if timed != tc.timed || e.Level != tc.level || e.Message != tc.message || !equalMaps(e.Fields, tc.fields) {
				t.Fatalf("Parse = %+v timed=%v; want level %q message %q fields %v timed=%v", e, timed, tc.level, tc.message, tc.fields, tc.timed)
			}
			if timed && e.Timestamp.IsZero() {
				t.Fatal("timed entry without a time")
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sample: ten records (i = 0..9) plus an undated line after record 4 and a
// line still being written at the end.
func sample() string {
	var b strings.Builder
	levels := []string{"DEBUG", "INFO", "WARN", "ERROR"}
	for i := range 10 {
		b.WriteString(rec(i, levels[i%4], fmt.Sprintf("line %d", i)))
		if i == 4 {
			b.WriteString("undated output\n")
		}
	}
	b.WriteString(`{"time":"2025-03-01T12:00:10Z","level":"INFO","msg":"half`)
	return b.String()
}

func TestRead(t *testing.T) {
	t.Parallel()
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{"all forward", Query{Limit: 100}, []string{"line 0", "line 1", "line 2", "line 3", "line 4", "undated output", "line 5", "line 6", "line 7", "line 8", "line 9"}},
		{"limit", Query{Limit: 2}, []string{"line 0", "line 1"}},
		{"zero limit", Query{Limit: 0}, []string{}},
		{"backward", Query{Limit: 3, Backward: true}, []string{"line 9", "line 8", "line 7"}},
		{"backward through undated", Query{Limit: 6, Backward: true}, []string{"line 9", "line 8", "line 7", "line 6", "line 5", "undated output"}},
		{"cursor forward", Query{Limit: 3, Cursor: at(4)}, []string{"line 4", "undated output", "line 5"}},
		{"cursor backward", Query{Limit: 3, Cursor: at(4), Backward: true}, []string{"undated output", "line 4", "line 3"}},
		{"level", Query{Limit: 100, Level: "warn"}, []string{"line 2", "line 3", "line 6", "line 7"}},
		{"level error backward", Query{Limit: 1, Level: "error", Backward: true}, []string{"line 7"}},
		{"search", Query{Limit: 100, Search: "ne 8"}, []string{"line 8"}},
		{"search is case-sensitive", Query{Limit: 100, Search: "LINE"}, []string{}},
		{"cursor after everything", Query{Limit: 100, Cursor: at(60)}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Read(strings.NewReader(sample()), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if msgs := messages(got); !slices.Equal(msgs, tc.want) {
				t.Fatalf("got %q, want %q", msgs, tc.want)
			}
		})
	}
}

func messages(es []Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Message)
	}
	return out
}

func TestReadDatesUndatedLines(t *testing.T) {
	t.Parallel()
	log := "before any record\n" + rec(3, "INFO", "a") + "after a\n"
	fallback := t0.Add(-time.Hour)
	for _, backward := range []bool{false, true} {
		got, err := Read(strings.NewReader(log), Query{Limit: 10, Backward: backward, Fallback: fallback})
		if err != nil {
			t.Fatal(err)
		}
		times := map[string]time.Time{}
		for _, e := range got {
			times[e.Message] = e.Timestamp
		}
		if !times["before any record"].Equal(fallback) || !times["after a"].Equal(t0.Add(3*time.Second)) || len(got) != 3 {
			t.Fatalf("backward=%v: %v", backward, got)
		}
	}
}

func TestReadSkipsOverlongLines(t *testing.T) {
	t.Parallel()
	long := `{"msg":"` + strings.Repeat("x", MaxLine+10) + `"}` + "\n"
	log := rec(0, "INFO", "first") + long + rec(1, "INFO", "second") + long
	for _, backward := range []bool{false, true} {
		got, err := Read(strings.NewReader(log), Query{Limit: 10, Backward: backward})
		if err != nil {
			t.Fatal(err)
		}
		msgs := messages(got)
		slices.Sort(msgs)
		if !slices.Equal(msgs, []string{"first", "second"}) {
			t.Fatalf("backward=%v: %d entries, want first and second", backward, len(msgs))
		}
	}
}

// A log larger than Window: only its end is read, and the cut line at the
// window's start is not taken for a line.
func TestReadWindow(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	n := 0
	for b.Len() < Window+Window/4 {
		b.WriteString(rec(n, "INFO", fmt.Sprintf("line %d", n)))
		n++
	}
	for _, backward := range []bool{false, true} {
		got, err := Read(bytes.NewReader(b.Bytes()), Query{Limit: n, Backward: backward})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || len(got) >= n || len(got) < n/2 {
			t.Fatalf("backward=%v: %d of %d entries", backward, len(got), n)
		}
		for _, e := range got {
			if !strings.HasPrefix(e.Message, "line ") {
				t.Fatalf("backward=%v: cut line read as %q", backward, e.Raw)
			}
		}
		newest := got[len(got)-1]
		if backward {
			newest = got[0]
		}
		if newest.Message != fmt.Sprintf("line %d", n-1) {
			t.Fatalf("backward=%v: newest = %q", backward, newest.Message)
		}
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	all, err := Read(strings.NewReader(sample()), Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q    Query
		want []string
	}{
		{Query{Limit: 2, Backward: true}, []string{"line 9", "line 8"}},
		{Query{Limit: 2, Level: "error"}, []string{"line 3", "line 7"}},
		{Query{Limit: 5, Cursor: t0.Add(8 * time.Second)}, []string{"line 8", "line 9"}},
	}
	for _, tc := range tests {
		if got := messages(Filter(all, tc.q)); !slices.Equal(got, tc.want) {
			t.Errorf("Filter(%+v) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

func TestAtLeast(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level, min string
		want       bool
	}{
		{"error", "warn", true}, {"info", "warn", false}, {"debug", "debug", true},
		{"odd", "info", true}, {"odd", "warn", false},
	}
	for _, tc := range tests {
		if got := AtLeast(tc.level, tc.min); got != tc.want {
			t.Errorf("AtLeast(%q, %q) = %v", tc.level, tc.min, got)
		}
	}
}
