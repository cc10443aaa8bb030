package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

var tagTests = []test{
	{"SetMoveList", testTagSetMoveList},
	{"Errors", testTagErrors},
	{"Delete", testTagDelete},
	{"DeleteTemplateCascades", testDeleteTemplateCascades},
	{"PutTemplateKeepsBuildsAndTags", testPutTemplateKeeps},
}

// tagsOf lists templateID's tags as "tag=build", in the store's order.
func tagsOf(ctx context.Context, t *testing.T, s store.Store, templateID string) []string {
	t.Helper()
	list, err := s.ListTags(ctx, templateID)
	must(t, "ListTags "+templateID, err)
	out := []string{}
	for _, tag := range list {
		if tag.TemplateID != templateID {
			t.Fatalf("ListTags(%s) returned a tag of template %q", templateID, tag.TemplateID)
		}
		if tag.CreatedAt.IsZero() || tag.CreatedAt.Location() != tag.CreatedAt.UTC().Location() {
			t.Fatalf("tag %s: CreatedAt %v, want a time in UTC", tag.Tag, tag.CreatedAt)
		}
		out = append(out, tag.Tag+"="+tag.BuildID)
	}
	return out
}

// tagsWithBuilds stores templates t1 (alias alias-t1) and t2 with builds t1-b1, t1-b2, t2-b1.
func tagsWithBuilds(ctx context.Context, t *testing.T, s store.Store) {
	t.Helper()
	must(t, "PutTemplate t1", s.PutTemplate(ctx, newTemplate("t1", 0, "alias-t1")))
	must(t, "PutTemplate t2", s.PutTemplate(ctx, newTemplate("t2", 1)))
	for i, id := range []string{"t1-b1", "t1-b2", "t2-b1"} {
		must(t, "CreateBuild "+id, s.CreateBuild(ctx, newBuild(id, id[:2], i)))
	}
}

// testTagSetMoveList sets tags, moves one, and checks CreatedAt records when
// a tag started naming its current build.
func testTagSetMoveList(ctx context.Context, t *testing.T, s store.Store) {
	tagsWithBuilds(ctx, t, s)
	steps := []struct {
		tag, build string
		want       []string // t1's tags afterwards, ordered by tag
	}{
		{"v1", "t1-b1", []string{"v1=t1-b1"}},
		{"latest", "t1-b1", []string{"latest=t1-b1", "v1=t1-b1"}},
		{"latest", "t1-b1", []string{"latest=t1-b1", "v1=t1-b1"}}, // again: no change
		{"v2", "t1-b2", []string{"latest=t1-b1", "v1=t1-b1", "v2=t1-b2"}},
		{"latest", "t1-b2", []string{"latest=t1-b2", "v1=t1-b1", "v2=t1-b2"}}, // moved
	}
	for _, st := range steps {
		must(t, fmt.Sprintf("SetTag %s=%s", st.tag, st.build), s.SetTag(ctx, "t1", st.tag, st.build))
		wantEqual(t, fmt.Sprintf("tags after %s=%s", st.tag, st.build), tagsOf(ctx, t, s, "t1"), st.want)
	}
	wantEqual(t, "tags of t2", tagsOf(ctx, t, s, "t2"), []string{})

	// Same-build sets keep CreatedAt; a move never goes back in time.
	before, err := s.ListTags(ctx, "t1")
	must(t, "ListTags", err)
	must(t, "SetTag v1 again", s.SetTag(ctx, "t1", "v1", "t1-b1"))
	must(t, "SetTag v2 to b1", s.SetTag(ctx, "t1", "v2", "t1-b1"))
	after, err := s.ListTags(ctx, "t1")
	must(t, "ListTags", err)
	wantEqual(t, "v1 after setting it to its own build", after[1], before[1])
	if after[2].CreatedAt.Before(before[2].CreatedAt) {
		t.Fatalf("moved tag v2: CreatedAt %v before the earlier %v", after[2].CreatedAt, before[2].CreatedAt)
	}

	// The build records keep the Tags they were created with.
	getBuild(ctx, t, s, "t1-b2", newBuild("t1-b2", "t1", 1))
	after[0].BuildID = "changed" // a copy: the store's tag stays
	wantEqual(t, "tags after changing a listed copy", tagsOf(ctx, t, s, "t1"),
		[]string{"latest=t1-b2", "v1=t1-b1", "v2=t1-b1"})
}

// testTagErrors checks each way SetTag refuses, each leaving no tag behind.
func testTagErrors(ctx context.Context, t *testing.T, s store.Store) {
	tagsWithBuilds(ctx, t, s)
	cases := []struct {
		name                 string
		template, tag, build string
		want                 error
	}{
		{"UnknownTemplate", "nope", "latest", "t1-b1", errdefs.ErrNotFound},
		{"UnknownBuild", "t1", "latest", "nope", errdefs.ErrNotFound},
		{"BuildOfAnotherTemplate", "t1", "latest", "t2-b1", errdefs.ErrInvalidArgument},
		{"EmptyTag", "t1", "", "t1-b1", errdefs.ErrInvalidArgument},
		{"ByAlias", "alias-t1", "latest", "t1-b1", errdefs.ErrNotFound},
	}
	for _, c := range cases {
		wantErr(t, "SetTag "+c.name, s.SetTag(ctx, c.template, c.tag, c.build), c.want)
	}
	for _, tpl := range []string{"t1", "t2", "nope"} {
		wantEqual(t, "tags of "+tpl+" after refused sets", tagsOf(ctx, t, s, tpl), []string{})
	}
	// A refused move leaves the tag where it was.
	must(t, "SetTag", s.SetTag(ctx, "t1", "latest", "t1-b1"))
	wantErr(t, "SetTag moving to another template's build",
		s.SetTag(ctx, "t1", "latest", "t2-b1"), errdefs.ErrInvalidArgument)
	wantEqual(t, "tags of t1", tagsOf(ctx, t, s, "t1"), []string{"latest=t1-b1"})
}

// testTagDelete checks tags are per template: deleting t1:latest leaves
// t2:latest alone.
func testTagDelete(ctx context.Context, t *testing.T, s store.Store) {
	tagsWithBuilds(ctx, t, s)
	must(t, "SetTag t1", s.SetTag(ctx, "t1", "latest", "t1-b1"))
	must(t, "SetTag t2", s.SetTag(ctx, "t2", "latest", "t2-b1"))
	must(t, "DeleteTag", s.DeleteTag(ctx, "t1", "latest"))
	wantEqual(t, "tags of t1", tagsOf(ctx, t, s, "t1"), []string{})
	wantEqual(t, "tags of t2", tagsOf(ctx, t, s, "t2"), []string{"latest=t2-b1"})
	cases := []struct{ name, template, tag string }{
		{"Twice", "t1", "latest"},
		{"UnknownTag", "t2", "v9"},
		{"UnknownTemplate", "nope", "latest"},
	}
	for _, c := range cases {
		wantErr(t, "DeleteTag "+c.name, s.DeleteTag(ctx, c.template, c.tag), errdefs.ErrNotFound)
	}
	// The build stays; only the name went.
	getBuild(ctx, t, s, "t1-b1", newBuild("t1-b1", "t1", 0))
}

// testDeleteTemplateCascades checks a deleted template takes its builds and
// tags along, and that a new template with its id starts empty.
func testDeleteTemplateCascades(ctx context.Context, t *testing.T, s store.Store) {
	tagsWithBuilds(ctx, t, s)
	must(t, "SetTag t1", s.SetTag(ctx, "t1", "latest", "t1-b2"))
	must(t, "SetTag t2", s.SetTag(ctx, "t2", "latest", "t2-b1"))
	must(t, "DeleteTemplate", s.DeleteTemplate(ctx, "t1"))
	for _, id := range []string{"t1-b1", "t1-b2"} {
		_, err := s.GetBuild(ctx, id)
		wantErr(t, "GetBuild of a deleted template", err, errdefs.ErrNotFound)
	}
	list, err := s.ListBuilds(ctx, "")
	must(t, "ListBuilds", err)
	wantEqual(t, "builds left", ids(list), []string{"t2-b1"})
	wantEqual(t, "tags of t1", tagsOf(ctx, t, s, "t1"), []string{})
	wantEqual(t, "tags of t2", tagsOf(ctx, t, s, "t2"), []string{"latest=t2-b1"})
	wantErr(t, "DeleteTag of a deleted template", s.DeleteTag(ctx, "t1", "latest"), errdefs.ErrNotFound)

	putTemplates(ctx, t, s, "t1")
	list, err = s.ListBuilds(ctx, "t1")
	must(t, "ListBuilds", err)
	wantEqual(t, "builds of the new t1", ids(list), []string{})
	wantEqual(t, "tags of the new t1", tagsOf(ctx, t, s, "t1"), []string{})
	must(t, "CreateBuild reusing a deleted build's id", s.CreateBuild(ctx, newBuild("t1-b1", "t1", 7)))
}

// testPutTemplateKeeps checks replacing a template (as every finished build
// does) keeps its builds and tags: an upsert, not a delete and insert.
func testPutTemplateKeeps(ctx context.Context, t *testing.T, s store.Store) {
	tagsWithBuilds(ctx, t, s)
	must(t, "SetTag", s.SetTag(ctx, "t1", "latest", "t1-b2"))
	next := newTemplate("t1", 0, "py")
	next.BuildID, next.Layers = "t1-b2", []string{"/l/t1-b2"}
	must(t, "PutTemplate", s.PutTemplate(ctx, next))
	list, err := s.ListBuilds(ctx, "t1")
	must(t, "ListBuilds", err)
	wantEqual(t, "builds of t1", ids(list), []string{"t1-b2", "t1-b1"})
	wantEqual(t, "tags of t1", tagsOf(ctx, t, s, "t1"), []string{"latest=t1-b2"})
}
