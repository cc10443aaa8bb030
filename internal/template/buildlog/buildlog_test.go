package buildlog

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// testConfig numbers two steps: "A <pkg>" lines start step 1 and report
// pkg, "B" lines start step 2, and "item <pkg>" reports pkg once step 2 runs.
func testConfig() Config {
	return Config{
		Prefix: "test",
		Steps:  map[int]string{1: "step one", 2: "step two"},
		Tool:   "tool",
		Parse: func(line string, cur int) (int, string) {
			verb, rest, _ := strings.Cut(line, " ")
			switch {
			case verb == "A":
				return 1, rest
			case verb == "B":
				return 2, ""
			case verb == "item" && cur >= 2:
				return 0, rest
			}
			return 0, ""
		},
	}
}

func TestProgressLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := New(&buf, testConfig())
	p.Beat() // before any step: silent
	// "A again" goes back a step, which is ignored, but its package counts.
	for _, l := range []string{"A bash", "A git", "item early", "B", "A again", "item x", "item y", "E: broken"} {
		p.Observe(l)
	}
	p.Beat()
	p.Printf("done in %s", "1s")
	got := buf.String()
	for _, want := range []string{
		"test: step one... (step 1/2)\n",
		"test: step two... (step 2/2)\n",
		"test: tool: E: broken\n",
		"test: step two (step 2/2), 3 packages so far (latest y), ",
		"test: done in 1s\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "step 1/2") != 1 {
		t.Errorf("a step went backwards:\n%s", got)
	}
	if !strings.HasPrefix(got, "test: step one...") {
		t.Errorf("Beat before the first step wrote something:\n%s", got)
	}
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	p := New(&buf, testConfig())
	p.Enter(2)
	stop := p.Heartbeat(t.Context(), 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	stop()
	n := strings.Count(buf.String(), "in this step")
	if n < 2 {
		t.Errorf("got %d heartbeat lines in 100ms at 10ms intervals:\n%s", n, buf.String())
	}
}

func TestLineWriter(t *testing.T) {
	t.Parallel()
	var got []string
	w := &LineWriter{Fn: func(s string) { got = append(got, s) }}
	for _, chunk := range []string{"one\r\ntw", "o\n", "", "three\nfour"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	w.Flush()
	w.Flush()
	if want := []string{"one", "two", "three", "four"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
}

func TestTailLines(t *testing.T) {
	t.Parallel()
	tl := &TailLines{Max: 2}
	if tl.String() != "" {
		t.Errorf("empty tail = %q", tl.String())
	}
	for _, s := range []string{"a", "b", "c"} {
		tl.Add(s)
	}
	if got := tl.String(); got != "b\nc" {
		t.Errorf("tail = %q, want %q", got, "b\nc")
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
