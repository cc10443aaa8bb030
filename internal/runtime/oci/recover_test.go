package oci

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestRecoverSettlesMove: a snapshot that died moving the writable layer
// is finished when the layer reached its place (the sandbox stands on it)
// and undone when it did not (the layer stays the sandbox's own).
func TestRecoverSettlesMove(t *testing.T) {
	for _, tc := range []struct {
		name   string
		moved  bool // the rename happened before the crash
		copied bool // a copy was half made beside the destination
	}{
		{"not yet moved", false, false},
		{"half copied", false, true},
		{"moved", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, snaps := t.TempDir(), t.TempDir()
			b := &Backend{name: Runc, opts: Options{StateRoot: root}}
			id := "sb0000000000000000001"
			dir := b.dir(id)
			upper := filepath.Join(dir, upperDir)
			for _, d := range []string{upper, filepath.Join(dir, workDir, "work"), filepath.Join(dir, rootfsDir)} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(upper, "data"), []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(snaps, "snap1", snapshotLayer)
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.moved {
				if err := os.Rename(upper, dst); err != nil {
					t.Fatal(err)
				}
			}
			if tc.copied {
				if err := os.MkdirAll(dst+copySuffix, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			rec := &record{ID: id, Backend: Runc, Layers: []string{"/templates/base"}, Stopped: true, Moving: dst}
			if err := writeRecord(dir, rec); err != nil {
				t.Fatal(err)
			}
			if err := b.Recover(context.Background()); err != nil {
				t.Fatal(err)
			}
			got, err := readRecord(dir)
			if err != nil {
				t.Fatal(err)
			}
			wantLayers := []string{"/templates/base"}
			dataAt := upper
			if tc.moved {
				wantLayers, dataAt = []string{dst, "/templates/base"}, dst
			}
			if got.Moving != "" || !slices.Equal(got.Layers, wantLayers) || !got.Stopped {
				t.Fatalf("record after recovery: %+v; want layers %v, not moving", got, wantLayers)
			}
			if b, err := os.ReadFile(filepath.Join(dataAt, "data")); err != nil || string(b) != "mine" {
				t.Fatalf("the layer's data at %s: %q, %v", dataAt, b, err)
			}
			if _, err := os.Stat(dst + copySuffix); !os.IsNotExist(err) {
				t.Fatalf("half copy left: %v", err)
			}
			if tc.moved {
				if _, err := os.Stat(filepath.Join(dir, workDir, "work")); !os.IsNotExist(err) {
					t.Fatal("the old work dir was kept for the new writable layer")
				}
			}
		})
	}
}

// TestRecoverSettlesStarted: a record still saying stopped (with an image)
// for a sandbox the runtime runs is a start or restore that finished just
// before a crash: it is recorded as running and its stale image goes. A
// sandbox the runtime does not run keeps its record and image.
func TestRecoverSettlesStarted(t *testing.T) {
	for _, tc := range []struct {
		name        string
		state       string // the runtime's answer to `state`
		code        int
		wantSettled bool
	}{
		{"running", fmt.Sprintf(`{"id":"x","pid":%d,"status":"running"}`, os.Getpid()), 0, true},
		{"paused", fmt.Sprintf(`{"id":"x","pid":%d,"status":"paused"}`, os.Getpid()), 0, true},
		{"running but its init is gone", `{"id":"x","pid":999999999,"status":"running"}`, 0, false},
		{"stopped", `{"id":"x","pid":0,"status":"stopped"}`, 0, false},
		{"unknown to the runtime", "", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, statErr := recoverWithImage(t, tc.state, tc.code, &record{Stopped: true, Checkpointed: true})
			if tc.wantSettled {
				if got.Stopped || got.Checkpointed || !os.IsNotExist(statErr) {
					t.Errorf("record %+v, image: %v; want running, without its stale image", got, statErr)
				}
			} else if !got.Stopped || !got.Checkpointed || statErr != nil {
				t.Errorf("record %+v, image: %v; want it stopped with its image", got, statErr)
			}
		})
	}
}

// TestRecoverSettlesCheckpoint: a checkpoint under way when warren died
// is runsc's own work and ends the sandbox once the image is whole; the
// record then says so, and a restart restores instead of booting afresh.
// A sandbox that runs on kept its processes and loses the partial image.
func TestRecoverSettlesCheckpoint(t *testing.T) {
	defer func(d time.Duration) { checkpointWait = d }(checkpointWait)
	checkpointWait = 300 * time.Millisecond
	for _, tc := range []struct {
		name      string
		state     string
		code      int
		wantImage bool
	}{
		{"the sandbox ended", `{"id":"x","pid":0,"status":"stopped"}`, 0, true},
		{"runsc forgot it", "", 1, true},
		{"its init is gone", `{"id":"x","pid":999999999,"status":"running"}`, 0, true},
		{"it runs on", fmt.Sprintf(`{"id":"x","pid":%d,"status":"running"}`, os.Getpid()), 0, false},
		{"still frozen: it never began", fmt.Sprintf(`{"id":"x","pid":%d,"status":"paused"}`, os.Getpid()), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, statErr := recoverWithImage(t, tc.state, tc.code, &record{Checkpointing: true})
			if got.Checkpointing {
				t.Errorf("record %+v still says checkpointing", got)
			}
			if tc.wantImage {
				if !got.Stopped || !got.Checkpointed || statErr != nil {
					t.Errorf("record %+v, image: %v; want it stopped with its image", got, statErr)
				}
			} else if got.Stopped || got.Checkpointed || !os.IsNotExist(statErr) {
				t.Errorf("record %+v, image: %v; want it running without the partial image", got, statErr)
			}
		})
	}
}

// recoverWithImage runs Recover over one runsc sandbox whose state dir has
// a memory image and record rec (its id, backend and layers filled in),
// with a fake runsc answering `state` with state (or failing with code),
// and returns the record after it and what stat says of the image.
func recoverWithImage(t *testing.T, state string, code int, rec *record) (*record, error) {
	t.Helper()
	errOut := ""
	if code != 0 {
		errOut = "container does not exist"
	}
	bin, _ := fakeRuntime(t, state, errOut, code)
	b := &Backend{name: Runsc, opts: Options{StateRoot: t.TempDir()}, cli: newCLI(bin, "/r", nil, nil)}
	rec.ID, rec.Backend, rec.Layers = "sb0000000000000000002", Runsc, []string{"/templates/base"}
	dir := b.dir(rec.ID)
	img := filepath.Join(dir, imageDir)
	if err := os.MkdirAll(img, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(img, "checkpoint.img"), []byte("state"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	if err := b.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := readRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(img)
	return got, statErr
}
