package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/history"
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

// A sandbox's log reads the same running, paused and, for a while, killed
// (through the history room, told by OnEnding); an id never created is not
// found.
func TestLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := history.NewEndedLogs(e.m)
	e.m.OnEnding(logs.Keep)
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
		got, err := logs.Logs(e.ctx, sb.ID, q)
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
	if _, err := e.m.Logs(e.ctx, sb.ID, all); !errdefs.IsNotFound(err) {
		t.Errorf("the manager's Logs of a killed sandbox = %v, want not found: what is kept is the room's", err)
	}
	for _, l := range []interface {
		Logs(context.Context, string, sandboxlog.Query) ([]sandboxlog.Entry, error)
	}{e.m, logs} {
		if _, err := l.Logs(e.ctx, "nosuchsandbox", all); !errdefs.IsNotFound(err) {
			t.Fatalf("%T.Logs(unknown) = %v, want not found", l, err)
		}
	}
}
