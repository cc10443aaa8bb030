package storetest

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// newBuild returns a finished build of templateID with every field set.
func newBuild(id, templateID string, createdMin int) *store.Build {
	return &store.Build{
		ID:         id,
		TemplateID: templateID,
		Status:     store.BuildReady,
		Reason:     "",
		ReasonStep: "3",
		Request:    []byte(`{"fromImage":"python:3.12","steps":[]}`),
		Tags:       []string{"latest", "v1"},
		CreatedAt:  at(createdMin),
		FinishedAt: at(createdMin + 2),
		Layers:     []string{"/l/" + id, "/t/" + templateID + "/rootfs"},
		Env:        map[string]string{"PATH": "/usr/bin:/bin"},
		Workdir:    "/app",
		User:       "user",
		StartCmd:   "python app.py",
		ReadyCmd:   "curl -fs localhost:8000",
		Labels:     map[string]string{"maintainer": "suite"},
		CPUCount:   4,
		MemoryMB:   1024,
		SizeBytes:  1 << 34, // past 32 bits on purpose
	}
}

// storedBuild returns b as a store hands it back: times in UTC, empty
// collections and Request as nil.
func storedBuild(b *store.Build) *store.Build {
	c := *b
	c.Request = nilIfEmpty(slices.Clone(b.Request))
	c.Tags = nilIfEmpty(slices.Clone(b.Tags))
	c.Layers = nilIfEmpty(slices.Clone(b.Layers))
	c.Env = nilIfEmptyMap(maps.Clone(b.Env))
	c.Labels = nilIfEmptyMap(maps.Clone(b.Labels))
	c.CreatedAt = b.CreatedAt.UTC()
	c.FinishedAt = b.FinishedAt.UTC()
	return &c
}

// getBuild fetches id and compares it with want.
func getBuild(ctx context.Context, t *testing.T, s store.Store, id string, want *store.Build) {
	t.Helper()
	got, err := s.GetBuild(ctx, id)
	must(t, "GetBuild "+id, err)
	wantEqual(t, "GetBuild "+id, got, storedBuild(want))
}

// putTemplates stores a bare template for each id.
func putTemplates(ctx context.Context, t *testing.T, s store.Store, ids ...string) {
	t.Helper()
	for i, id := range ids {
		must(t, "PutTemplate "+id, s.PutTemplate(ctx, newTemplate(id, i)))
	}
}

var buildTests = []test{
	{"RoundTrip", testBuildRoundTrip},
	{"CreateErrors", testBuildCreateErrors},
	{"Update", testBuildUpdate},
	{"ListOrderAndFilter", testBuildList},
	{"Copies", testBuildCopies},
}

// testBuildRoundTrip stores builds of several shapes and reads each back.
func testBuildRoundTrip(ctx context.Context, t *testing.T, s store.Store) {
	putTemplates(ctx, t, s, "t1")
	cases := []struct {
		name    string
		in, out *store.Build
	}{
		{"AllSet", newBuild("b1", "t1", 0), newBuild("b1", "t1", 0)},
		{"Waiting", &store.Build{ID: "b2", TemplateID: "t1", Status: store.BuildWaiting, CreatedAt: at(1)},
			&store.Build{ID: "b2", TemplateID: "t1", Status: store.BuildWaiting, CreatedAt: at(1)}},
		{"ZeroValues", &store.Build{ID: "b3", TemplateID: "t1"}, &store.Build{ID: "b3", TemplateID: "t1"}},
		{"EmptyCollectionsComeBackNil", &store.Build{ID: "b4", TemplateID: "t1", Request: []byte{},
			Tags: []string{}, Layers: []string{}, Env: map[string]string{}, Labels: map[string]string{}},
			&store.Build{ID: "b4", TemplateID: "t1"}},
	}
	for _, c := range cases {
		must(t, "CreateBuild "+c.name, s.CreateBuild(ctx, c.in))
		getBuild(ctx, t, s, c.in.ID, c.out)
	}
}

// testBuildCreateErrors checks each way CreateBuild refuses, and that a
// refused create stores nothing.
func testBuildCreateErrors(ctx context.Context, t *testing.T, s store.Store) {
	putTemplates(ctx, t, s, "t1")
	must(t, "CreateBuild b1", s.CreateBuild(ctx, newBuild("b1", "t1", 0)))
	cases := []struct {
		name string
		in   *store.Build
		want error
	}{
		{"Nil", nil, errdefs.ErrInvalidArgument},
		{"NoID", &store.Build{TemplateID: "t1"}, errdefs.ErrInvalidArgument},
		{"UnknownTemplate", newBuild("b2", "nope", 1), errdefs.ErrNotFound},
		{"NoTemplate", newBuild("b3", "", 1), errdefs.ErrNotFound},
		{"Duplicate", newBuild("b1", "t1", 5), errdefs.ErrAlreadyExists},
	}
	for _, c := range cases {
		wantErr(t, "CreateBuild "+c.name, s.CreateBuild(ctx, c.in), c.want)
	}
	list, err := s.ListBuilds(ctx, "")
	must(t, "ListBuilds", err)
	wantEqual(t, "ListBuilds after refused creates", ids(list), []string{"b1"})
	getBuild(ctx, t, s, "b1", newBuild("b1", "t1", 0))
	_, err = s.GetBuild(ctx, "b2")
	wantErr(t, "GetBuild unknown", err, errdefs.ErrNotFound)
}

// testBuildUpdate walks a build from waiting to ready, the way the builder
// does, and checks the updates UpdateBuild refuses.
func testBuildUpdate(ctx context.Context, t *testing.T, s store.Store) {
	putTemplates(ctx, t, s, "t1", "t2")
	waiting := &store.Build{ID: "b1", TemplateID: "t1", Status: store.BuildWaiting, Tags: []string{"v1"}, CreatedAt: at(0)}
	must(t, "CreateBuild", s.CreateBuild(ctx, waiting))
	steps := []*store.Build{
		{ID: "b1", TemplateID: "t1", Status: store.BuildBuilding, Tags: []string{"v1"}, CreatedAt: at(0)},
		{ID: "b1", TemplateID: "t1", Status: store.BuildError, Reason: "exit 1", ReasonStep: "2",
			CreatedAt: at(0), FinishedAt: at(1)},
		newBuild("b1", "t1", 0),
	}
	for _, b := range steps {
		must(t, "UpdateBuild to "+b.Status, s.UpdateBuild(ctx, b))
		getBuild(ctx, t, s, "b1", b)
	}
	cases := []struct {
		name string
		in   *store.Build
		want error
	}{
		{"Unknown", newBuild("nope", "t1", 0), errdefs.ErrNotFound},
		{"NoID", &store.Build{TemplateID: "t1"}, errdefs.ErrInvalidArgument},
		{"Nil", nil, errdefs.ErrInvalidArgument},
		{"OtherTemplate", newBuild("b1", "t2", 0), errdefs.ErrInvalidArgument},
	}
	for _, c := range cases {
		wantErr(t, "UpdateBuild "+c.name, s.UpdateBuild(ctx, c.in), c.want)
	}
	getBuild(ctx, t, s, "b1", newBuild("b1", "t1", 0))
	_, err := s.GetBuild(ctx, "nope")
	wantErr(t, "GetBuild after updating an unknown build", err, errdefs.ErrNotFound)
}

// testBuildList checks newest-first order (ties by id) and the filter.
func testBuildList(ctx context.Context, t *testing.T, s store.Store) {
	putTemplates(ctx, t, s, "t1", "t2")
	list, err := s.ListBuilds(ctx, "")
	must(t, "ListBuilds empty", err)
	wantEqual(t, "ListBuilds on an empty store", len(list), 0)
	for _, b := range []*store.Build{
		newBuild("a", "t1", 0), newBuild("c", "t2", 5), newBuild("b", "t1", 5),
		newBuild("d", "t1", 9), newBuild("e", "t2", 1),
	} {
		must(t, "CreateBuild "+b.ID, s.CreateBuild(ctx, b))
	}
	cases := []struct {
		template string
		want     []string
	}{
		{"", []string{"d", "b", "c", "e", "a"}},
		{"t1", []string{"d", "b", "a"}},
		{"t2", []string{"c", "e"}},
		{"nope", []string{}},
	}
	for _, c := range cases {
		list, err := s.ListBuilds(ctx, c.template)
		must(t, "ListBuilds "+c.template, err)
		wantEqual(t, "ListBuilds("+c.template+") order", ids(list), c.want)
	}
	list, err = s.ListBuilds(ctx, "t2")
	must(t, "ListBuilds t2", err)
	wantEqual(t, "listed record", list[0], storedBuild(newBuild("c", "t2", 5)))
}

// testBuildCopies checks neither side can change the other's record.
func testBuildCopies(ctx context.Context, t *testing.T, s store.Store) {
	putTemplates(ctx, t, s, "t1")
	in := newBuild("b1", "t1", 0)
	must(t, "CreateBuild", s.CreateBuild(ctx, in))
	want := storedBuild(in)
	scribble := func(b *store.Build) {
		b.Request[0], b.Tags[0], b.Layers[0] = 'X', "changed", "changed"
		b.Env["PATH"], b.Labels["maintainer"] = "changed", "changed"
	}
	scribble(in)
	got, err := s.GetBuild(ctx, "b1")
	must(t, "GetBuild", err)
	wantEqual(t, "GetBuild after caller changed its input", got, want)
	scribble(got)
	list, err := s.ListBuilds(ctx, "t1")
	must(t, "ListBuilds", err)
	scribble(list[0])
	upd := newBuild("b1", "t1", 0)
	must(t, "UpdateBuild", s.UpdateBuild(ctx, upd))
	scribble(upd)
	getBuild(ctx, t, s, "b1", want)
}
