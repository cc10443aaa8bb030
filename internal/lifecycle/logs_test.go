package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
)

func logLine(ts time.Time, level, msg string) string {
	return fmt.Sprintf(`{"time":%q,"level":%q,"msg":%q,"component":"envd"}`+"\n", ts.Format(time.RFC3339Nano), level, msg)
}

func msgs(es []sandboxlog.Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Message)
	}
	return out
}

// A sandbox's log reads the same running, paused and, for a while, killed;
// an id never created is not found.
func TestLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{})
	now := time.Now().UTC()
	log := logLine(now, "INFO", "envd listening") + "raw output\n" + logLine(now.Add(time.Second), "ERROR", "boom")
	if err := e.b.WriteLog(sb.ID, []byte(log)); err != nil {
		t.Fatal(err)
	}
	all := sandboxlog.Query{Limit: 10}
	want := []string{"envd listening", "raw output", "boom"}
	check := func(when string, q sandboxlog.Query, want []string) {
		t.Helper()
		got, err := e.m.Logs(e.ctx, sb.ID, q)
		if err != nil || !slices.Equal(msgs(got), want) {
			t.Fatalf("%s: Logs = %q, %v; want %q", when, msgs(got), err, want)
		}
	}
	check("running", all, want)
	check("level", sandboxlog.Query{Limit: 10, Level: "error"}, []string{"boom"})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	check("paused", all, want)
	if err := e.m.Kill(e.ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	check("killed", all, want)
	check("killed, backward", sandboxlog.Query{Limit: 1, Backward: true}, []string{"boom"})
	if _, err := e.m.Logs(e.ctx, "nosuchsandbox", all); !errdefs.IsNotFound(err) {
		t.Fatalf("Logs(unknown) = %v, want not found", err)
	}
}

func TestEndedLogsBounds(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	var l endedLogs
	for i := range endedSandboxes + 5 {
		l.put(fmt.Sprint(i), []sandboxlog.Entry{{Message: fmt.Sprint(i)}}, t0.Add(time.Duration(i)*time.Second))
	}
	tests := []struct {
		id   string
		at   time.Time
		kept bool
	}{
		{"0", t0.Add(time.Minute), false}, // evicted: too many
		{"4", t0.Add(time.Minute), false},
		{"5", t0.Add(time.Minute), true},
		{fmt.Sprint(endedSandboxes + 4), t0.Add(2 * time.Minute), true},
		{fmt.Sprint(endedSandboxes + 4), t0.Add(endedRetention + 5*time.Minute), false}, // expired
	}
	for _, tc := range tests {
		if _, ok := l.get(tc.id, tc.at); ok != tc.kept {
			t.Errorf("get(%s) at +%v: kept = %v, want %v", tc.id, tc.at.Sub(t0), ok, tc.kept)
		}
	}
}

// A killed sandbox keeps only the end of a long log.
func TestEndedLogKeepsTheEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{})
	var b strings.Builder
	now := time.Now().UTC()
	for i := range endedEntries + 50 {
		b.WriteString(logLine(now.Add(time.Duration(i)*time.Millisecond), "INFO", fmt.Sprintf("line %d", i)))
	}
	if err := e.b.WriteLog(sb.ID, []byte(b.String())); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Kill(e.ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	got, err := e.m.Logs(e.ctx, sb.ID, sandboxlog.Query{Limit: 5000})
	if err != nil || len(got) != endedEntries {
		t.Fatalf("kept %d entries, %v; want %d", len(got), err, endedEntries)
	}
	if first, last := got[0].Message, got[len(got)-1].Message; first != "line 50" || last != fmt.Sprintf("line %d", endedEntries+49) {
		t.Fatalf("kept %q to %q", first, last)
	}
}
