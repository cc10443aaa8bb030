package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// memoryImages lists the runsc memory images under dir: checkpoint dirs
// of sandboxes and memory dirs of snapshots.
func memoryImages(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Name() == "checkpoint.img" || strings.HasPrefix(d.Name(), "pages") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestDiskOnlyWritesNoImage: what keeps only the disk on runsc writes no
// memory image, even with checkpoints at once (--checkpoint-after=0): a
// pause without memory, a snapshot of a sandbox so paused and a sandbox
// made from it, and a resume without memory of a checkpointed sandbox
// (its image goes).
func TestDiskOnlyWritesNoImage(t *testing.T) {
	cfg := loadConfig(t)
	if !contains(cfg.runtimes, "runsc") {
		t.Skip("only runsc checkpoints memory")
	}
	o := serverOpts{index: 188, runtime: "runsc", dataDir: t.TempDir(), args: []string{"--checkpoint-after=0"}}
	s := launchServer(t, cfg, o)
	noImage := func(step string) {
		t.Helper()
		// A checkpoint of a frozen sandbox starts right after its pause
		// answered: give a wrong one the time to show.
		time.Sleep(time.Second)
		if imgs := memoryImages(o.dataDir); len(imgs) > 0 {
			t.Fatalf("%s: memory images on disk: %v", step, imgs)
		}
	}
	id := s.createSandbox(t, `{"templateID":"base","timeout":600}`)
	s.uploadFile(t, id, "/home/user/kept.txt", "disk only")
	s.mustCall(t, "POST", "/sandboxes/"+id+"/pause", `{"memory":false}`, http.StatusNoContent)
	noImage("pause without memory")

	var snap struct{ SnapshotID string }
	if err := json.Unmarshal(s.mustCall(t, "POST", "/sandboxes/"+id+"/snapshots", `{}`, http.StatusCreated), &snap); err != nil {
		t.Fatal(err)
	}
	noImage("snapshot of a sandbox paused without memory")
	copyID := s.createSandbox(t, `{"templateID":"`+snap.SnapshotID+`","timeout":600}`)
	if got := s.downloadFile(t, copyID, "/home/user/kept.txt"); got != "disk only" {
		t.Fatalf("file in the sandbox from the disk-only snapshot = %q", got)
	}
	noImage("sandbox from a disk-only snapshot")

	// Checkpointed, then resumed without memory: the image goes.
	s.mustCall(t, "POST", "/sandboxes/"+copyID+"/pause", `{}`, http.StatusNoContent)
	waitFor(t, time.Minute, func() bool { return runscCheckpointed(o.dataDir, copyID) }, "no checkpoint a minute after the pause")
	s.mustCall(t, "POST", "/v2/sandboxes/"+copyID+"/connect", `{"timeout":60,"memory":false}`, http.StatusCreated)
	noImage("resume without memory of a checkpointed sandbox")

	for _, sb := range []string{id, copyID} {
		s.mustCall(t, "DELETE", "/sandboxes/"+sb, "", http.StatusNoContent)
	}
	s.mustCall(t, "DELETE", "/templates/"+snap.SnapshotID, "", http.StatusNoContent)
	s.checkHostFree(t, "runsc", "we2e188", []string{id, copyID})
}

// freshIndexes are TestForksFresh's servers, by runtime position.
var freshIndexes = []int{192, 189}

// TestForksFresh: two forks of one sandbox get what E2B's get afresh (see
// docs/architecture.md, "Pause, snapshots and forks"): each its own id in
// the environment and in /run/e2b, and its own random bytes; the host name
// stays the source's.
func TestForksFresh(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		if i >= len(freshIndexes) {
			break
		}
		t.Run(rt, func(t *testing.T) {
			s := launchServer(t, cfg, serverOpts{index: freshIndexes[i], runtime: rt, dataDir: t.TempDir()})
			c := goClient(t, cfg, s)
			src := s.createSandbox(t, `{"templateID":"base","timeout":600}`)
			want := freshFacts(t, c, src)
			var forks []struct{ Sandbox struct{ SandboxID string } }
			if err := json.Unmarshal(s.mustCall(t, "POST", "/sandboxes/"+src+"/fork", `{"count":2}`, http.StatusCreated), &forks); err != nil || len(forks) != 2 {
				t.Fatalf("fork: %v %+v", err, forks)
			}
			seen := map[string]string{want.random: src}
			for _, f := range forks {
				id := f.Sandbox.SandboxID
				got := freshFacts(t, c, id)
				if got.envID != id || got.fileID != id {
					t.Errorf("fork %s: E2B_SANDBOX_ID %q, /run/e2b/.E2B_SANDBOX_ID %q; want its own id", id, got.envID, got.fileID)
				}
				if got.hostname != want.hostname {
					t.Errorf("fork %s: host name %q, want the source's %q", id, got.hostname, want.hostname)
				}
				if other, dup := seen[got.random]; dup {
					t.Errorf("fork %s read the same random bytes as %s: %s", id, other, got.random)
				}
				seen[got.random] = id
			}
			ids := []string{src}
			for _, f := range forks {
				ids = append(ids, f.Sandbox.SandboxID)
			}
			s.killSandboxes(t)
			s.checkHostFree(t, rt, fmt.Sprintf("we2e%d", freshIndexes[i]), ids)
		})
	}
}

type forkFacts struct{ envID, fileID, hostname, random string }

// freshFacts reads what must (or must not) differ between forks in
// sandbox id.
func freshFacts(t *testing.T, c *warren.Client, id string) forkFacts {
	t.Helper()
	sb, err := c.Connect(t.Context(), id, 10*time.Minute)
	if err != nil {
		t.Fatalf("connecting to %s: %v", id, err)
	}
	res, err := sb.Commands.Run(t.Context(), `echo "$E2B_SANDBOX_ID"; cat /run/e2b/.E2B_SANDBOX_ID; echo; hostname; head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; echo`, warren.CommandOptions{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("reading %s's facts: %+v, %v", id, res, err)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("%s's facts: %q", id, res.Stdout)
	}
	return forkFacts{envID: lines[0], fileID: lines[1], hostname: lines[2], random: lines[3]}
}
