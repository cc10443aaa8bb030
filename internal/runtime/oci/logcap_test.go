package oci

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// lines returns n numbered log lines.
func lines(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"level":"info","msg":"line %06d"}`+"\n", i)
	}
	return b.String()
}

// TestCapLog: a log past max is cut to whole lines of its last keep
// bytes; one within max is left alone; a writer appending goes on at the
// new end, with nothing lost or zeroed.
func TestCapLog(t *testing.T) {
	const lineLen = 37 // len(lines(0, 1))
	cases := []struct {
		name      string
		content   string
		max, keep int64
		cut       bool
		want      string
	}{
		{"under max", lines(0, 10), 1000, 100, false, lines(0, 10)},
		{"at max", lines(0, 10), 10 * lineLen, 100, false, lines(0, 10)},
		{"over max", lines(0, 100), 1000, 3 * lineLen, true, lines(97, 3)},
		{"keep mid-line", lines(0, 100), 1000, 3*lineLen + 10, true, lines(97, 3)},
		{"empty", "", 10, 5, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "init.log")
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			// The sandbox's side: an O_APPEND descriptor kept open.
			w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			cut, err := capLog(path, c.max, c.keep)
			if err != nil || cut != c.cut {
				t.Fatalf("capLog = %v, %v; want %v", cut, err, c.cut)
			}
			if _, err := w.WriteString(lines(1000, 1)); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if want := c.want + lines(1000, 1); string(got) != want {
				t.Errorf("log after the cut and one more line:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// TestWatchLog: a sandbox's init.log written past InitLogMax is cut back
// to at most InitLogKeep, and the watcher ends once the sandbox's state
// dir is gone.
func TestWatchLog(t *testing.T) {
	b := &Backend{opts: Options{StateRoot: t.TempDir()}}
	const id = "sb1"
	if err := os.Mkdir(b.dir(id), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(b.dir(id), initLog)
	w, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := bytes.Repeat([]byte("x"), 1023)
	line = append(line, '\n')
	for range (InitLogMax >> 10) + 64 {
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	b.watchLog(id)
	b.watchLog(id) // a second start (a restore) adds no watcher
	err = testutil.Poll(4*logCheckInterval, 100*time.Millisecond, func() error {
		fi, err := os.Stat(path)
		if err != nil || fi.Size() > InitLogKeep {
			return fmt.Errorf("init.log: %v, %v", fi.Size(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(b.dir(id)); err != nil {
		t.Fatal(err)
	}
	err = testutil.Poll(4*logCheckInterval, 100*time.Millisecond, func() error {
		if _, running := b.logWatchers.Load(id); running {
			return fmt.Errorf("the watcher of %s still runs", id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
