package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

var volumeTests = []test{
	{"CreateGet", testVolumeCreateGet},
	{"NameUniquePerTeam", testVolumeNames},
	{"ListByTeam", testVolumeList},
	{"Delete", testVolumeDelete},
	{"ConcurrentSameName", testVolumeConcurrent},
	{"MountsOnSandbox", testVolumeMountsSandbox},
}

func newVolume(id, team, name string, createdMin int) *store.Volume {
	return &store.Volume{ID: id, TeamID: team, Name: name, Token: "tok-" + id, SizeMB: 1024, CreatedAt: at(createdMin)}
}

// storedVolume is v as a store hands it back: its time in UTC.
func storedVolume(v *store.Volume) *store.Volume {
	c := *v
	c.CreatedAt = v.CreatedAt.UTC()
	return &c
}

func testVolumeCreateGet(ctx context.Context, t *testing.T, s store.Store) {
	v := newVolume("vol1", "acme", "data", 0)
	must(t, "CreateVolume", s.CreateVolume(ctx, v))
	got, err := s.GetVolume(ctx, "vol1")
	must(t, "GetVolume", err)
	wantEqual(t, "GetVolume", got, storedVolume(v))
	got, err = s.GetVolumeByName(ctx, "acme", "data")
	must(t, "GetVolumeByName", err)
	wantEqual(t, "GetVolumeByName", got, storedVolume(v))

	for _, c := range []struct {
		op  string
		err error
	}{
		{"GetVolume unknown", func() error { _, err := s.GetVolume(ctx, "nope"); return err }()},
		{"GetVolumeByName other team", func() error { _, err := s.GetVolumeByName(ctx, "beta", "data"); return err }()},
		{"GetVolumeByName unknown", func() error { _, err := s.GetVolumeByName(ctx, "acme", "nope"); return err }()},
	} {
		wantErr(t, c.op, c.err, errdefs.ErrNotFound)
	}
	for _, bad := range []*store.Volume{nil, {Name: "x"}, {ID: "x"}} {
		wantErr(t, "CreateVolume incomplete", s.CreateVolume(ctx, bad), errdefs.ErrInvalidArgument)
	}
}

func testVolumeNames(ctx context.Context, t *testing.T, s store.Store) {
	must(t, "CreateVolume", s.CreateVolume(ctx, newVolume("vol1", "acme", "data", 0)))
	cases := []struct {
		name string
		v    *store.Volume
		want error
	}{
		{"same name, same team", newVolume("vol2", "acme", "data", 1), errdefs.ErrAlreadyExists},
		{"same id, other name", newVolume("vol1", "acme", "other", 1), errdefs.ErrAlreadyExists},
		{"same id, other team", newVolume("vol1", "beta", "data", 1), errdefs.ErrAlreadyExists},
		{"same name, other team", newVolume("vol3", "beta", "data", 1), nil},
		{"other case is another name", newVolume("vol4", "acme", "Data", 1), nil},
	}
	for _, c := range cases {
		wantErr(t, "CreateVolume "+c.name, s.CreateVolume(ctx, c.v), c.want)
	}
	got, err := s.GetVolumeByName(ctx, "beta", "data")
	must(t, "GetVolumeByName beta", err)
	wantEqual(t, "the other team's volume", got.ID, "vol3")
}

func testVolumeList(ctx context.Context, t *testing.T, s store.Store) {
	list, err := s.ListVolumes(ctx, "")
	must(t, "ListVolumes empty", err)
	wantEqual(t, "ListVolumes empty", len(list), 0)
	for _, v := range []*store.Volume{
		newVolume("v1", "beta", "zeta", 0),
		newVolume("v2", "acme", "models", 1),
		newVolume("v3", "acme", "cache", 2),
		newVolume("v4", "beta", "alpha", 3),
	} {
		must(t, "CreateVolume "+v.ID, s.CreateVolume(ctx, v))
	}
	cases := []struct {
		team string
		want []string
	}{
		{"", []string{"v3", "v2", "v4", "v1"}},
		{"acme", []string{"v3", "v2"}},
		{"beta", []string{"v4", "v1"}},
		{"gamma", []string{}},
	}
	for _, c := range cases {
		list, err := s.ListVolumes(ctx, c.team)
		must(t, "ListVolumes "+c.team, err)
		wantEqual(t, "ListVolumes("+c.team+")", ids(list), c.want)
	}
	list, err = s.ListVolumes(ctx, "acme")
	must(t, "ListVolumes acme", err)
	wantEqual(t, "ListVolumes record", list[0], storedVolume(newVolume("v3", "acme", "cache", 2)))
}

func testVolumeDelete(ctx context.Context, t *testing.T, s store.Store) {
	must(t, "CreateVolume", s.CreateVolume(ctx, newVolume("vol1", "acme", "data", 0)))
	must(t, "DeleteVolume", s.DeleteVolume(ctx, "vol1"))
	_, err := s.GetVolume(ctx, "vol1")
	wantErr(t, "GetVolume deleted", err, errdefs.ErrNotFound)
	wantErr(t, "DeleteVolume again", s.DeleteVolume(ctx, "vol1"), errdefs.ErrNotFound)
	// The name is free again once the volume is gone.
	must(t, "CreateVolume same name", s.CreateVolume(ctx, newVolume("vol2", "acme", "data", 1)))
}

// testVolumeConcurrent creates one name from many writers at once: exactly
// one wins, the others get ErrAlreadyExists (not some other error).
func testVolumeConcurrent(ctx context.Context, t *testing.T, s store.Store) {
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			errs[i] = s.CreateVolume(ctx, newVolume(string(rune('a'+i)), "acme", "data", i))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errdefs.IsConflict(err):
			t.Fatalf("concurrent CreateVolume: %v, want success or a conflict", err)
		}
	}
	wantEqual(t, "winners", won, 1)
}

func testVolumeMountsSandbox(ctx context.Context, t *testing.T, s store.Store) {
	sb := newSandbox("sb1", 0)
	sb.VolumeMounts = nil
	must(t, "CreateSandbox without mounts", s.CreateSandbox(ctx, sb))
	got, err := s.GetSandbox(ctx, "sb1")
	must(t, "GetSandbox", err)
	if got.VolumeMounts != nil {
		t.Fatalf("VolumeMounts = %#v, want nil", got.VolumeMounts)
	}
	mounts := []store.VolumeMount{{VolumeID: "vol-a", Name: "data", Path: "/mnt/data"}}
	sb.VolumeMounts = slices.Clone(mounts)
	must(t, "UpdateSandbox with mounts", s.UpdateSandbox(ctx, sb))
	got, err = s.GetSandbox(ctx, "sb1")
	must(t, "GetSandbox", err)
	wantEqual(t, "VolumeMounts after update", got.VolumeMounts, mounts)
	sb.VolumeMounts = []store.VolumeMount{}
	must(t, "UpdateSandbox empty mounts", s.UpdateSandbox(ctx, sb))
	list, err := s.ListSandboxes(ctx)
	must(t, "ListSandboxes", err)
	if len(list) != 1 || list[0].VolumeMounts != nil {
		t.Fatalf("ListSandboxes = %+v, want one sandbox with nil VolumeMounts", list)
	}
}
