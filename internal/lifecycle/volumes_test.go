package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// fakeVolumes resolves names to ids and ids to host directories, which a
// test may move.
type fakeVolumes struct {
	mu   sync.Mutex
	ids  map[string]string // name -> id
	dirs map[string]string // id -> host dir
}

func newFakeVolumes(t *testing.T, names ...string) *fakeVolumes {
	v := &fakeVolumes{ids: map[string]string{}, dirs: map[string]string{}}
	for i, n := range names {
		id := fmt.Sprintf("vol%d", i)
		v.ids[n], v.dirs[id] = id, t.TempDir()
	}
	return v
}

func (v *fakeVolumes) Resolve(ctx context.Context, team string, mounts []store.VolumeMount) ([]store.VolumeMount, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := slices.Clone(mounts)
	for i, m := range out {
		id, ok := v.ids[m.Name]
		if !ok {
			return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("volume %q not found", m.Name))
		}
		out[i].VolumeID = id
	}
	return out, nil
}

func (v *fakeVolumes) HostPath(ctx context.Context, id string) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	dir, ok := v.dirs[id]
	if !ok {
		return "", errdefs.New(errdefs.ErrNotFound, "no such volume")
	}
	return dir, nil
}

func (v *fakeVolumes) move(t *testing.T, id string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.dirs[id] = t.TempDir()
	return v.dirs[id]
}

func newVolumeEnv(t *testing.T, vols Volumes) *env {
	return newEnvWith(t, func(o *Options) {
		if vols != nil {
			o.Volumes = vols
		}
	})
}

func TestCreateWithVolumes(t *testing.T) {
	t.Parallel()
	data := []store.VolumeMount{{Name: "data", Path: "/mnt/data"}}
	tests := []struct {
		name    string
		noVols  bool
		mounts  []store.VolumeMount
		wantErr func(error) bool
	}{
		{"mounted", false, data, nil},
		{"two volumes", false, append(slices.Clone(data), store.VolumeMount{Name: "cache", Path: "/root/.cache"}), nil},
		{"volumes not available", true, data, func(err error) bool { return errors.Is(err, errdefs.ErrNotImplemented) }},
		{"unknown volume", false, []store.VolumeMount{{Name: "nope", Path: "/mnt/x"}}, errdefs.IsNotFound},
		{"over /proc", false, []store.VolumeMount{{Name: "data", Path: "/proc"}}, errdefs.IsInvalidArgument},
		{"relative path", false, []store.VolumeMount{{Name: "data", Path: "mnt"}}, errdefs.IsInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vols := newFakeVolumes(t, "data", "cache")
			var e *env
			if tt.noVols {
				e = newVolumeEnv(t, nil)
			} else {
				e = newVolumeEnv(t, vols)
			}
			sb, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute, VolumeMounts: tt.mounts})
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Fatalf("Create = %v", err)
				}
				if n := e.instances(t); n != 0 {
					t.Fatalf("%d instances left by a failed create", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []runtime.Mount
			for _, m := range tt.mounts {
				id := vols.ids[m.Name]
				if i := slices.IndexFunc(sb.VolumeMounts, func(v store.VolumeMount) bool { return v.Name == m.Name }); i < 0 || sb.VolumeMounts[i].VolumeID != id || sb.VolumeMounts[i].Path != m.Path {
					t.Errorf("recorded mounts %+v, want %s as %s at %s", sb.VolumeMounts, m.Name, id, m.Path)
				}
				want = append(want, runtime.Mount{Source: vols.dirs[id], Target: m.Path})
			}
			if got := e.b.Mounts(sb.ID); !slices.Equal(got, want) {
				t.Errorf("backend mounts %v, want %v", got, want)
			}
		})
	}
}

// TestResumeMountsAgain: a start (a cold boot or a restore) asks where
// the volume is now and mounts it from there.
func TestResumeMountsAgain(t *testing.T) {
	t.Parallel()
	vols := newFakeVolumes(t, "data")
	e := newVolumeEnv(t, vols)
	sb := e.create(t, sandbox.CreateRequest{VolumeMounts: []store.VolumeMount{{Name: "data", Path: "/mnt/data"}}})
	if err := e.m.Pause(e.ctx, sb.ID, false); err != nil {
		t.Fatal(err)
	}
	moved := vols.move(t, "vol0")
	if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err != nil {
		t.Fatal(err)
	}
	want := []runtime.Mount{{Source: moved, Target: "/mnt/data"}}
	if got := e.b.Mounts(sb.ID); !slices.Equal(got, want) {
		t.Fatalf("mounts after resume %v, want %v", got, want)
	}
	// Checkpointed right after (CheckpointAfter 0): the restore mounts it from
	// where it is now too.
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitCheckpointed(t, e, sb.ID)
	moved = vols.move(t, "vol0")
	if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err != nil {
		t.Fatal(err)
	}
	want = []runtime.Mount{{Source: moved, Target: "/mnt/data"}}
	if got := e.b.Mounts(sb.ID); !slices.Equal(got, want) {
		t.Fatalf("mounts after a restore %v, want %v", got, want)
	}
}

// TestSnapshotKeepsVolumeMounts: a snapshot records the source's mounts;
// a sandbox from a memory image mounts the same ones (other ones are
// refused), one from a disk-only snapshot the request's, else the
// snapshot's.
func TestSnapshotKeepsVolumeMounts(t *testing.T) {
	t.Parallel()
	data := []store.VolumeMount{{Name: "data", Path: "/mnt/data"}}
	other := []store.VolumeMount{{Name: "cache", Path: "/mnt/data"}}
	tests := []struct {
		name     string
		memory   bool
		req      []store.VolumeMount
		want     string // the volume name mounted; "" for an ErrInvalidArgument
		wantPath string
	}{
		{"memory, none asked", true, nil, "data", "/mnt/data"},
		{"memory, same asked", true, data, "data", "/mnt/data"},
		{"memory, other asked", true, other, "", ""},
		{"disk only, none asked", false, nil, "data", "/mnt/data"},
		{"disk only, other asked", false, other, "cache", "/mnt/data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vols := newFakeVolumes(t, "data", "cache")
			e := newVolumeEnv(t, vols)
			if !tt.memory {
				e.b.WithoutCheckpoint()
			}
			src := e.create(t, sandbox.CreateRequest{VolumeMounts: data})
			defer e.snaps.Hold()()
			snap, _, err := e.m.Checkpoint(e.ctx, src.ID, t.TempDir()+"/snap", nil)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Memory != tt.memory || !slices.Equal(snap.VolumeMounts, src.VolumeMounts) {
				t.Fatalf("snapshot memory %v, mounts %+v; want %v, %+v", snap.Memory, snap.VolumeMounts, tt.memory, src.VolumeMounts)
			}
			tpl, _ := e.st.GetTemplate(e.ctx, "base")
			sb, err := e.m.CreateFrom(e.ctx, sandbox.CreateRequest{TemplateID: snap.ID, Timeout: time.Minute, VolumeMounts: tt.req, AnyTeam: true}, tpl, snap)
			if tt.want == "" {
				if !errdefs.IsInvalidArgument(err) {
					t.Fatalf("CreateFrom = %v, want ErrInvalidArgument", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			id := vols.ids[tt.want]
			want := []runtime.Mount{{Source: vols.dirs[id], Target: tt.wantPath}}
			if got := e.b.Mounts(sb.ID); !slices.Equal(got, want) || len(sb.VolumeMounts) != 1 || sb.VolumeMounts[0].VolumeID != id {
				t.Fatalf("mounts %v (recorded %+v), want %v", got, sb.VolumeMounts, want)
			}
		})
	}
}

// TestTakeOverMountsVolumes: node b takes over a sandbox parked by node
// a and mounts its volume from where b has it.
func TestTakeOverMountsVolumes(t *testing.T) {
	t.Parallel()
	e, b, bBackend, _, _ := twoNodes(t)
	onA, onB := newFakeVolumes(t, "data"), newFakeVolumes(t, "data")
	e.m.opts.Volumes, b.opts.Volumes = onA, onB
	sb := e.create(t, sandbox.CreateRequest{VolumeMounts: []store.VolumeMount{{Name: "data", Path: "/mnt/data"}}})
	if rec, err := e.st.GetSandbox(e.ctx, sb.ID); err != nil || len(rec.VolumeMounts) == 0 {
		t.Fatalf("the store did not keep the sandbox's VolumeMounts: %+v, %v", rec, err)
	}
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitParked(t, e.st, sb.ID)
	if err := e.st.MoveSandbox(e.ctx, sb.ID, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Connect(e.ctx, sb.ID, time.Minute, true); err != nil {
		t.Fatal(err)
	}
	want := []runtime.Mount{{Source: onB.dirs["vol0"], Target: "/mnt/data"}}
	if got := bBackend.Mounts(sb.ID); !slices.Equal(got, want) {
		t.Fatalf("mounts on b %v, want %v", got, want)
	}
}
