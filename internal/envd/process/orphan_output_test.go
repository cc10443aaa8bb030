package process_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestChildWritesAfterExit: a child the command left behind (as xdg-open
// leaves the browser it hands a URL to) may write to the command's stdout
// and stderr after the command ended, and is not killed for it: envd keeps
// reading its pipes until the last writer closes them.
func TestChildWritesAfterExit(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	dir := t.TempDir()
	tests := []struct{ name, redirect string }{
		{"stdout", ""},
		{"stderr", ">&2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(dir, tt.name)
			// The child outlives the drain after the shell's exit, then
			// writes; with the pipe closed it would die of SIGPIPE before
			// it made the marker.
			r := run(t, c, startReq("(sleep 1.5; echo late "+tt.redirect+"; touch "+marker+") & echo started"))
			if r.err != nil || r.end == nil || r.stdout.String() != "started\n" {
				t.Fatalf("stream: err %v, end %v, stdout %q", r.err, r.end, r.stdout.String())
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, err := os.Stat(marker); err == nil {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the child did not survive its write after the command ended")
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
