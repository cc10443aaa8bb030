package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPausedSurvivesRestart pauses a sandbox (a checkpoint on runsc, the
// freezer on runc), restarts the server, and resumes it with its memory:
// a file and a background process are both there.
func TestPausedSurvivesRestart(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			o := serverOpts{index: 60 + i, runtime: rt, dataDir: t.TempDir()}
			s := launchServer(t, cfg, o)
			id := s.createSandbox(t, `{"templateID":"base","timeout":600}`)
			s.uploadFile(t, id, "/home/user/kept.txt", "across a restart")
			s.mustCall(t, "POST", "/sandboxes/"+id+"/pause", `{}`, http.StatusNoContent)
			s.stopLeavingSandboxes(t)

			o.apiKey = s.apiKey
			s2 := launchServer(t, cfg, o)
			info := s2.mustCall(t, "GET", "/sandboxes/"+id, "", http.StatusOK)
			if !strings.Contains(string(info), `"state":"paused"`) {
				t.Fatalf("after restart: %s", info)
			}
			s2.mustCall(t, "POST", "/sandboxes/"+id+"/connect", `{"timeout":60}`, http.StatusCreated)
			if got := s2.downloadFile(t, id, "/home/user/kept.txt"); got != "across a restart" {
				t.Fatalf("file after restart and resume = %q", got)
			}
			s2.mustCall(t, "DELETE", "/sandboxes/"+id, "", http.StatusNoContent)
			s2.checkHostFree(t, rt, fmt.Sprintf("we2e%d", 60+i), []string{id})
		})
	}
}

// TestBrokenCheckpoint damages a paused runsc sandbox's memory image: the
// resume fails with an error that says what to do, and a resume without
// memory boots the sandbox from its disk.
func TestBrokenCheckpoint(t *testing.T) {
	cfg := loadConfig(t)
	if !contains(cfg.runtimes, "runsc") {
		t.Skip("only runsc checkpoints memory")
	}
	o := serverOpts{index: 62, runtime: "runsc", dataDir: t.TempDir(), args: []string{"--checkpoint-after=0"}}
	s := launchServer(t, cfg, o)
	id := s.createSandbox(t, `{"templateID":"base","timeout":600}`)
	s.uploadFile(t, id, "/home/user/kept.txt", "on disk")
	s.mustCall(t, "POST", "/sandboxes/"+id+"/pause", `{}`, http.StatusNoContent)
	// The pause answers once frozen; the checkpoint follows.
	waitFor(t, time.Minute, func() bool { return runscCheckpointed(o.dataDir, id) }, "no checkpoint a minute after the pause")
	img := filepath.Join(o.dataDir, "sandboxes", "runsc", id, "checkpoint", "checkpoint.img")
	if err := os.WriteFile(img, []byte("not a checkpoint"), 0o600); err != nil {
		t.Fatal(err)
	}
	status, body := s.call(t, "POST", "/v2/sandboxes/"+id+"/connect", `{"timeout":60}`)
	if status < 500 || !strings.Contains(string(body), "without memory") {
		t.Fatalf("resume from a corrupt image: %d %s; want a 5xx that suggests a resume without memory", status, body)
	}
	s.mustCall(t, "POST", "/v2/sandboxes/"+id+"/connect", `{"timeout":60,"memory":false}`, http.StatusCreated)
	if got := s.downloadFile(t, id, "/home/user/kept.txt"); got != "on disk" {
		t.Fatalf("file after a cold boot = %q", got)
	}
	s.mustCall(t, "DELETE", "/sandboxes/"+id, "", http.StatusNoContent)
	s.checkHostFree(t, "runsc", "we2e62", []string{id})
}

// runscCheckpointed reports whether runsc sandbox id's instance record says
// its memory image is complete.
func runscCheckpointed(dataDir, id string) bool {
	var rec struct {
		Checkpointed bool `json:"checkpointed"`
	}
	data, err := os.ReadFile(filepath.Join(dataDir, "sandboxes", "runsc", id, "instance.json"))
	return err == nil && json.Unmarshal(data, &rec) == nil && rec.Checkpointed
}

// TestCheckpointAfterDelay: a paused runsc sandbox stays frozen in memory
// at first and goes to disk after --checkpoint-after; both resume.
func TestCheckpointAfterDelay(t *testing.T) {
	cfg := loadConfig(t)
	if !contains(cfg.runtimes, "runsc") {
		t.Skip("only runsc checkpoints memory")
	}
	o := serverOpts{index: 63, runtime: "runsc", dataDir: t.TempDir(), args: []string{"--checkpoint-after=1s"}}
	s := launchServer(t, cfg, o)
	id := s.createSandbox(t, `{"templateID":"base","timeout":600}`)
	s.uploadFile(t, id, "/home/user/kept.txt", "kept")
	img := filepath.Join(o.dataDir, "sandboxes", "runsc", id, "checkpoint", "checkpoint.img")
	onDisk := func() bool { _, err := os.Stat(img); return err == nil }
	for round, later := range []bool{false, true} {
		s.mustCall(t, "POST", "/sandboxes/"+id+"/pause", `{}`, http.StatusNoContent)
		if !later && onDisk() {
			t.Fatalf("round %d: memory image on disk right after the pause", round)
		}
		if later {
			// Past --checkpoint-after the checkpoint starts; how long it
			// takes is the machine's business, so wait for it, bounded.
			waitFor(t, time.Minute, onDisk, fmt.Sprintf("round %d: no memory image on disk a minute after the pause", round))
		}
		s.mustCall(t, "POST", "/sandboxes/"+id+"/connect", `{"timeout":60}`, http.StatusCreated)
		if got := s.downloadFile(t, id, "/home/user/kept.txt"); got != "kept" {
			t.Fatalf("round %d: file after resume = %q", round, got)
		}
	}
	// Kill while paused on disk: the image goes with the sandbox.
	s.mustCall(t, "POST", "/sandboxes/"+id+"/pause", `{}`, http.StatusNoContent)
	waitFor(t, time.Minute, onDisk, "no memory image on disk a minute after the last pause")
	s.mustCall(t, "DELETE", "/sandboxes/"+id, "", http.StatusNoContent)
	if _, err := os.Stat(filepath.Dir(img)); !os.IsNotExist(err) {
		t.Fatalf("memory image after kill: %v", err)
	}
	s.checkHostFree(t, "runsc", "we2e63", []string{id})
}

// TestSnapshotDiskShared checks on disk that a snapshot does not copy the
// sandbox's writable layer where the backend can move it, that forks share
// it, and that deleting the snapshot and killing the sandboxes frees it all.
func TestSnapshotDiskShared(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			o := serverOpts{index: 64 + i, runtime: rt, dataDir: t.TempDir()}
			s := launchServer(t, cfg, o)
			id := s.createSandbox(t, `{"templateID":"base","timeout":600}`)
			s.uploadFile(t, id, "/home/user/big.bin", strings.Repeat("x", 8<<20))
			var snap struct{ SnapshotID string }
			if err := json.Unmarshal(s.mustCall(t, "POST", "/sandboxes/"+id+"/snapshots", `{}`, http.StatusCreated), &snap); err != nil {
				t.Fatal(err)
			}
			var forks []struct{ Sandbox struct{ SandboxID string } }
			if err := json.Unmarshal(s.mustCall(t, "POST", "/sandboxes/"+id+"/fork", `{"count":2}`, http.StatusCreated), &forks); err != nil || len(forks) != 2 {
				t.Fatalf("fork: %v %+v", err, forks)
			}
			ids := []string{id}
			for _, f := range forks {
				if f.Sandbox.SandboxID == "" {
					t.Fatalf("a fork failed: %+v", forks)
				}
				ids = append(ids, f.Sandbox.SandboxID)
				if got := s.downloadFile(t, f.Sandbox.SandboxID, "/home/user/big.bin"); len(got) != 8<<20 {
					t.Fatalf("fork sees %d bytes", len(got))
				}
			}
			// The forks' own writable layers hold nothing of the 8 MiB.
			for _, fid := range ids[1:] {
				if n := treeSize(t, upperOf(o.dataDir, rt, fid)); n > 1<<20 {
					t.Errorf("fork %s's writable layer holds %d bytes", fid, n)
				}
			}
			// runsc moves the source's layer into the snapshot instead of
			// copying it; runc copies it (its processes run on).
			srcUpper := treeSize(t, upperOf(o.dataDir, rt, id))
			if moved := srcUpper < 1<<20; moved != (rt == "runsc") {
				t.Errorf("source's writable layer holds %d bytes after the snapshot", srcUpper)
			}
			snaps := filepath.Join(o.dataDir, "snapshots")
			s.mustCall(t, "DELETE", "/templates/"+snap.SnapshotID, "", http.StatusNoContent)
			for _, sid := range ids {
				s.mustCall(t, "DELETE", "/sandboxes/"+sid, "", http.StatusNoContent)
			}
			waitEmpty(t, snaps)
			s.checkHostFree(t, rt, fmt.Sprintf("we2e%d", 64+i), ids)
		})
	}
}

// upperOf is a sandbox's writable layer: on its own disk (--disk-quota),
// or in its state dir.
func upperOf(dataDir, rt, id string) string {
	dir := filepath.Join(dataDir, "sandboxes", rt, id)
	if _, err := os.Stat(filepath.Join(dir, "disk.img")); err == nil {
		return filepath.Join(dir, "disk", "upper")
	}
	return filepath.Join(dir, "upper")
}

// treeSize sums the sizes of the regular files under dir.
func treeSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitEmpty waits for the snapshot collector to empty dir.
func waitEmpty(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		entries, err := os.ReadDir(dir)
		if err == nil && len(entries) == 0 || os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still holds %d entries after its snapshots and sandboxes are gone", dir, len(entries))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
