package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

var snapshotTests = []test{
	{"RoundTripAndNames", testSnapshotRoundTrip},
	{"NameMovesToNewest", testSnapshotNameMoves},
	{"Errors", testSnapshotErrors},
}

func newSnapshot(id string, at time.Time, names ...string) *store.Snapshot {
	return &store.Snapshot{
		ID: id, Names: names, SandboxID: "sb1", TemplateID: "base", Backend: "runsc",
		Dir: "/d/" + id, Layers: []string{"/d/" + id + "/layer", "/t/rootfs"}, Memory: true,
		Hostname: "e2b-sb1", EnvVars: map[string]string{"A": "1"}, CPUCount: 2, MemoryMB: 512,
		DiskMB: 1024, SizeBytes: 4096, CreatedAt: at.UTC(),
		VolumeMounts: []store.VolumeMount{{VolumeID: "vol-a", Name: "data", Path: "/mnt/data"}},
	}
}

func testSnapshotRoundTrip(ctx context.Context, t *testing.T, s store.Store) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	want := newSnapshot("s1", at, "mine")
	if err := s.CreateSnapshot(ctx, want); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"s1", "mine"} {
		got, err := s.GetSnapshot(ctx, key)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("GetSnapshot(%q) = %+v, %v\nwant %+v", key, got, err, want)
		}
	}
	if err := s.CreateSnapshot(ctx, newSnapshot("s0", at.Add(-time.Hour))); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListSnapshots(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "s1" || list[1].ID != "s0" || list[1].Names != nil {
		t.Fatalf("ListSnapshots = %+v, %v; want s1 then s0 (no names)", list, err)
	}
	if err := s.DeleteSnapshot(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSnapshot(ctx, "mine"); !errdefs.IsNotFound(err) {
		t.Errorf("name of a deleted snapshot: %v, want not found", err)
	}
}

func testSnapshotNameMoves(ctx context.Context, t *testing.T, s store.Store) {
	at := time.Now()
	if err := s.CreateSnapshot(ctx, newSnapshot("old", at, "n")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSnapshot(ctx, newSnapshot("new", at.Add(time.Second), "n")); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSnapshot(ctx, "n")
	if err != nil || got.ID != "new" {
		t.Fatalf("GetSnapshot(n) = %+v, %v; want the newer", got, err)
	}
	old, err := s.GetSnapshot(ctx, "old")
	if err != nil || old.Names != nil {
		t.Fatalf("the older snapshot = %+v, %v; want it kept without the name", old, err)
	}
}

func testSnapshotErrors(ctx context.Context, t *testing.T, s store.Store) {
	if _, err := s.GetSnapshot(ctx, "nope"); !errdefs.IsNotFound(err) {
		t.Errorf("GetSnapshot(unknown) = %v", err)
	}
	if err := s.DeleteSnapshot(ctx, "nope"); !errdefs.IsNotFound(err) {
		t.Errorf("DeleteSnapshot(unknown) = %v", err)
	}
	if err := s.CreateSnapshot(ctx, newSnapshot("", time.Now())); !errdefs.IsInvalidArgument(err) {
		t.Errorf("CreateSnapshot without id = %v", err)
	}
	if err := s.CreateSnapshot(ctx, newSnapshot("a", time.Now(), "b")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*store.Snapshot{newSnapshot("a", time.Now()), newSnapshot("b", time.Now()), newSnapshot("c", time.Now(), "a")} {
		if err := s.CreateSnapshot(ctx, bad); !errdefs.IsConflict(err) {
			t.Errorf("CreateSnapshot(id %q, names %v) = %v, want a conflict", bad.ID, bad.Names, err)
		}
	}
}
