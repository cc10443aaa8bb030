package storetest

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/store"
)

// newSandbox returns a sandbox with every field set.
func newSandbox(id string, startedMin int) *store.Sandbox {
	return &store.Sandbox{
		ID:                 id,
		TemplateID:         "tpl" + id,
		Alias:              "base",
		Backend:            "fake",
		State:              store.SandboxRunning,
		EnvdAccessToken:    "envd-" + id,
		TrafficAccessToken: "traffic-" + id,
		Metadata:           map[string]string{"owner": "suite", "id": id},
		EnvVars:            map[string]string{"LANG": "C.UTF-8"},
		CPUCount:           2,
		MemoryMB:           512,
		DiskMB:             1024,
		IP:                 "10.11.0.2",
		StartedAt:          at(startedMin),
		EndAt:              at(startedMin + 5),
		AutoPause:          true,
		AutoPauseNoMemory:  true,
		AutoResume:         true,
		Intent:             store.IntentPausing,
		Node:               "node-a",
		Parked:             true,
		Network: netpolicy.Policy{
			Egress: netpolicy.Egress{
				AllowInternet: true,
				AllowOut:      []netip.Prefix{netip.MustParsePrefix("1.1.1.1/32")},
				DenyOut:       []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")},
				AllowDomains:  []string{"*.example.com"},
			},
			Ingress: netpolicy.Ingress{Private: true, MaskRequestHost: "app.local:${PORT}", HTTPSPorts: []int{8443}},
		},
		APIKeyID: "key1",
		VolumeMounts: []store.VolumeMount{
			{VolumeID: "vol-a", Name: "data", Path: "/mnt/data"},
			{VolumeID: "vol-b", Name: "cache", Path: "/root/.cache"},
		},
	}
}

// stored returns s as a store hands it back: times in UTC.
func stored(s *store.Sandbox) *store.Sandbox {
	c := *s
	c.Metadata = maps.Clone(s.Metadata)
	c.EnvVars = maps.Clone(s.EnvVars)
	c.Network = s.Network.Clone()
	c.VolumeMounts = slices.Clone(s.VolumeMounts)
	c.StartedAt = s.StartedAt.UTC()
	c.EndAt = s.EndAt.UTC()
	c.PausedAt = s.PausedAt.UTC()
	return &c
}

var sandboxTests = []test{
	{"CreateGet", func(ctx context.Context, t *testing.T, s store.Store) {
		sb := newSandbox("sb1", 0)
		must(t, "CreateSandbox", s.CreateSandbox(ctx, sb))
		got, err := s.GetSandbox(ctx, "sb1")
		must(t, "GetSandbox", err)
		wantEqual(t, "GetSandbox", got, stored(sb))
	}},
	{"ZeroValues", func(ctx context.Context, t *testing.T, s store.Store) {
		// Only the id set: zero times, false booleans and nil collections
		// must survive the round trip unchanged.
		sb := &store.Sandbox{ID: "bare"}
		must(t, "CreateSandbox", s.CreateSandbox(ctx, sb))
		got, err := s.GetSandbox(ctx, "bare")
		must(t, "GetSandbox", err)
		wantEqual(t, "GetSandbox", got, sb)
	}},
	{"EmptyCollectionsComeBackNil", func(ctx context.Context, t *testing.T, s store.Store) {
		sb := &store.Sandbox{ID: "empty", Metadata: map[string]string{}, EnvVars: map[string]string{}, Network: netpolicy.Policy{Egress: netpolicy.Egress{AllowOut: []netip.Prefix{}}}}
		must(t, "CreateSandbox", s.CreateSandbox(ctx, sb))
		got, err := s.GetSandbox(ctx, "empty")
		must(t, "GetSandbox", err)
		wantEqual(t, "GetSandbox", got, &store.Sandbox{ID: "empty"})
	}},
	{"CreateDuplicate", func(ctx context.Context, t *testing.T, s store.Store) {
		must(t, "CreateSandbox", s.CreateSandbox(ctx, newSandbox("sb1", 0)))
		dup := newSandbox("sb1", 1)
		dup.State = store.SandboxPaused
		wantErr(t, "CreateSandbox duplicate", s.CreateSandbox(ctx, dup), errdefs.ErrAlreadyExists)
		got, err := s.GetSandbox(ctx, "sb1")
		must(t, "GetSandbox", err)
		wantEqual(t, "GetSandbox after failed create", got, stored(newSandbox("sb1", 0)))
	}},
	{"NotFound", func(ctx context.Context, t *testing.T, s store.Store) {
		_, err := s.GetSandbox(ctx, "nope")
		wantErr(t, "GetSandbox", err, errdefs.ErrNotFound)
		wantErr(t, "UpdateSandbox", s.UpdateSandbox(ctx, newSandbox("nope", 0)), errdefs.ErrNotFound)
		wantErr(t, "DeleteSandbox", s.DeleteSandbox(ctx, "nope"), errdefs.ErrNotFound)
	}},
	{"InvalidArgument", func(ctx context.Context, t *testing.T, s store.Store) {
		wantErr(t, "CreateSandbox nil", s.CreateSandbox(ctx, nil), errdefs.ErrInvalidArgument)
		wantErr(t, "CreateSandbox no id", s.CreateSandbox(ctx, &store.Sandbox{}), errdefs.ErrInvalidArgument)
		wantErr(t, "UpdateSandbox no id", s.UpdateSandbox(ctx, &store.Sandbox{}), errdefs.ErrInvalidArgument)
	}},
	{"Update", func(ctx context.Context, t *testing.T, s store.Store) {
		must(t, "CreateSandbox", s.CreateSandbox(ctx, newSandbox("sb1", 0)))
		must(t, "CreateSandbox", s.CreateSandbox(ctx, newSandbox("sb2", 0)))
		up := newSandbox("sb1", 0)
		up.State = store.SandboxPaused
		up.EndAt = at(60)
		up.Metadata = map[string]string{"new": "value"}
		up.EnvVars = nil
		up.Network = netpolicy.Policy{} // internet off, no rules
		must(t, "UpdateSandbox", s.UpdateSandbox(ctx, up))
		got, err := s.GetSandbox(ctx, "sb1")
		must(t, "GetSandbox", err)
		wantEqual(t, "GetSandbox after update", got, stored(up))
		other, err := s.GetSandbox(ctx, "sb2")
		must(t, "GetSandbox", err)
		wantEqual(t, "other sandbox after update", other, stored(newSandbox("sb2", 0)))
	}},
	{"Delete", func(ctx context.Context, t *testing.T, s store.Store) {
		must(t, "CreateSandbox", s.CreateSandbox(ctx, newSandbox("sb1", 0)))
		must(t, "CreateSandbox", s.CreateSandbox(ctx, newSandbox("sb2", 0)))
		must(t, "DeleteSandbox", s.DeleteSandbox(ctx, "sb1"))
		_, err := s.GetSandbox(ctx, "sb1")
		wantErr(t, "GetSandbox deleted", err, errdefs.ErrNotFound)
		wantErr(t, "DeleteSandbox twice", s.DeleteSandbox(ctx, "sb1"), errdefs.ErrNotFound)
		_, err = s.GetSandbox(ctx, "sb2")
		must(t, "GetSandbox survivor", err)
		// A deleted id is free again.
		must(t, "CreateSandbox again", s.CreateSandbox(ctx, newSandbox("sb1", 3)))
	}},
	{"ListOrder", testListSandboxes},
	{"Copies", testSandboxCopies},
}

// testListSandboxes checks newest StartedAt first, ties broken by id. The
// start times differ by fractions with different digit counts (.1s, .12s, a
// whole second) that naive RFC 3339 text ordering would get wrong.
func testListSandboxes(ctx context.Context, t *testing.T, s store.Store) {
	list, err := s.ListSandboxes(ctx)
	must(t, "ListSandboxes empty", err)
	if len(list) != 0 {
		t.Fatalf("ListSandboxes on an empty store returned %d records", len(list))
	}
	round := base.Truncate(time.Minute)
	mk := func(id string, after time.Duration) *store.Sandbox {
		sb := newSandbox(id, 0)
		sb.StartedAt = round.Add(after)
		return sb
	}
	// Created out of order on purpose; "a" and "e" tie.
	for _, sb := range []*store.Sandbox{
		mk("c", 100*time.Millisecond), mk("a", time.Minute), mk("b", 0),
		mk("e", time.Minute), mk("d", 120*time.Millisecond), mk("f", -time.Nanosecond),
	} {
		must(t, "CreateSandbox "+sb.ID, s.CreateSandbox(ctx, sb))
	}
	list, err = s.ListSandboxes(ctx)
	must(t, "ListSandboxes", err)
	wantEqual(t, "ListSandboxes order", ids(list), []string{"a", "e", "d", "c", "b", "f"})
	wantEqual(t, "listed record", list[0], stored(mk("a", time.Minute)))
}

func testSandboxCopies(ctx context.Context, t *testing.T, s store.Store) {
	in := newSandbox("sb1", 0)
	must(t, "CreateSandbox", s.CreateSandbox(ctx, in))
	want := stored(in)

	// The caller keeps using the record it passed in.
	in.Metadata["owner"] = "changed"
	in.EnvVars["LANG"] = "changed"
	in.Network.AllowOut[0] = netip.MustParsePrefix("9.9.9.9/32")
	in.State = store.SandboxPaused

	got, err := s.GetSandbox(ctx, "sb1")
	must(t, "GetSandbox", err)
	wantEqual(t, "GetSandbox after caller changed its input", got, want)

	// And changes what it got back.
	got.Metadata["owner"] = "changed"
	got.EnvVars["new"] = "x"
	got.Network.HTTPSPorts[0] = 1
	list, err := s.ListSandboxes(ctx)
	must(t, "ListSandboxes", err)
	list[0].Metadata["owner"] = "changed"

	again, err := s.GetSandbox(ctx, "sb1")
	must(t, "GetSandbox", err)
	wantEqual(t, "GetSandbox after caller changed returned records", again, want)
}
