package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
)

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

// noneLive is a manager with no live sandbox.
type noneLive struct{}

func (noneLive) Logs(_ context.Context, id string, _ sandboxlog.Query) ([]sandboxlog.Entry, error) {
	return nil, errdefs.New(errdefs.ErrNotFound, "sandbox "+id+" not found")
}

// Keep keeps the end of a killed sandbox's log, bounded in lines and in
// bytes, oldest first; a log it cannot read keeps nothing.
func TestKeep(t *testing.T) {
	t.Parallel()
	line := func(i int) sandboxlog.Entry { return sandboxlog.Entry{Message: fmt.Sprintf("line %d", i)} }
	tests := []struct {
		name        string
		lines       int
		size        int // bytes of each line's Raw
		failRead    bool
		wantN       int
		first, last string
	}{
		{name: "short log whole", lines: 3, wantN: 3, first: "line 0", last: "line 2"},
		{name: "long log's end", lines: endedEntries + 50, wantN: endedEntries, first: "line 50", last: fmt.Sprintf("line %d", endedEntries+49)},
		{name: "large lines by bytes", lines: 100, size: endedBytes / 10, wantN: 9, first: "line 91", last: "line 99"},
		{name: "unreadable", lines: 3, failRead: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			read := func(_ context.Context, q sandboxlog.Query) ([]sandboxlog.Entry, error) {
				if tc.failRead {
					return nil, errors.New("gone")
				}
				if !q.Backward {
					t.Error("Keep reads forward: it would keep the start")
				}
				var out []sandboxlog.Entry // newest first, as a backward read
				for i := tc.lines - 1; i >= 0 && len(out) < q.Limit; i-- {
					e := line(i)
					e.Raw = string(make([]byte, tc.size))
					out = append(out, e)
				}
				return out, nil
			}
			l := NewEndedLogs(noneLive{})
			l.Keep(context.Background(), "sb", read)
			got, err := l.Logs(context.Background(), "sb", sandboxlog.Query{Limit: 5000})
			if tc.wantN == 0 {
				if !errdefs.IsNotFound(err) {
					t.Fatalf("Logs = %d entries, %v; want not found", len(got), err)
				}
				return
			}
			if err != nil || len(got) != tc.wantN {
				t.Fatalf("kept %d entries, %v; want %d", len(got), err, tc.wantN)
			}
			msgs := []string{got[0].Message, got[len(got)-1].Message}
			if !slices.Equal(msgs, []string{tc.first, tc.last}) {
				t.Errorf("kept %q to %q, want %q to %q", msgs[0], msgs[1], tc.first, tc.last)
			}
		})
	}
}
