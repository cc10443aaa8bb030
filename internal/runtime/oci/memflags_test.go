package oci

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fakeRunscHelp writes a runtime binary that prints help text for the
// checkpoint and restore subcommands as runsc does (on stderr, exiting
// non-zero), listing the given flag names.
func fakeRunscHelp(t *testing.T, checkpoint, restore []string) string {
	t.Helper()
	help := func(flags []string) string {
		out := "echo '<sub> [flags] <container id> - a subcommand.' >&2\n"
		for _, f := range flags {
			// A description line that holds a dash word is not a flag.
			out += "printf '  -%s value\\n    \\tabout it, see -" + f + "-docs\\n' '" + f + "' >&2\n"
		}
		return out
	}
	script := "#!/bin/sh\ncase \"$1\" in\ncheckpoint)\n" + help(checkpoint) + ";;\nrestore)\n" + help(restore) +
		";;\nesac\necho \"failed to parse flags for \\\"$1\\\": flag: help requested\" >&2\nexit 128\n"
	bin := filepath.Join(t.TempDir(), "runsc")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestProbeMemoryFlags: the checkpoint and restore flags for a fast
// resume are used where runsc lists them, and only there.
func TestProbeMemoryFlags(t *testing.T) {
	current := []string{"compression", "direct", "exclude-committed-zero-pages", "image-path"}
	for _, tc := range []struct {
		name                  string
		opts                  Options
		checkpoint, restore   []string // flags the fake runsc lists
		wantCkpt, wantRestore []string
		wantMissing           []string
	}{
		{name: "current runsc", opts: Options{Runtime: Runsc},
			checkpoint: current, restore: []string{"background", "direct", "image-path"},
			wantCkpt:    []string{"--compression=none"},
			wantRestore: []string{"--background"}},
		{name: "runsc without background loading", opts: Options{Runtime: Runsc},
			checkpoint: []string{"image-path", "leave-running"}, restore: []string{"image-path", "detach"},
			wantMissing: []string{"checkpoint -compression", "restore -background"}},
		{name: "eager restores asked for", opts: Options{Runtime: Runsc, EagerRestore: true},
			checkpoint: current, restore: []string{"background"}},
		{name: "runc", opts: Options{Runtime: Runc},
			checkpoint: current, restore: []string{"background"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := fakeRunscHelp(t, tc.checkpoint, tc.restore)
			got := probeMemoryFlags(t.Context(), tc.opts, bin)
			if !slices.Equal(got.checkpoint, tc.wantCkpt) || !slices.Equal(got.restore, tc.wantRestore) || !slices.Equal(got.missing, tc.wantMissing) {
				t.Errorf("probe = %+v; want checkpoint %q, restore %q, missing %q", got, tc.wantCkpt, tc.wantRestore, tc.wantMissing)
			}
		})
	}
}
