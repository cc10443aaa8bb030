package tplclient

import (
	"slices"
	"testing"
)

func TestTemplates(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	c := f.client()
	ctx := t.Context()

	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].TemplateID != "tpl-1" || list[0].MemoryMB != 1024 || list[0].LastSpawnedAt != nil || list[0].CreatedAt.IsZero() {
		t.Errorf("List = %+v", list)
	}

	// IDs with "/" and ":" travel as one path segment.
	got, err := c.Get(ctx, "team/web:v1")
	if err != nil {
		t.Fatal(err)
	}
	if got.TemplateID != "tpl-1" || len(got.Builds) != 1 || got.Builds[0].FinishedAt == nil || got.LastSpawnedAt == nil {
		t.Errorf("Get = %+v", got)
	}

	if err := c.Delete(ctx, "tpl-1"); err != nil {
		t.Fatal(err)
	}

	tags, err := c.Tags(ctx, "tpl-1")
	if err != nil || len(tags) != 1 || tags[0].Tag != "v1" || tags[0].BuildID != "build-1" {
		t.Errorf("Tags = %+v, %v", tags, err)
	}

	as, err := c.AssignTags(ctx, "web:v1", []string{"prod", "stable"})
	if err != nil || as.BuildID != "build-1" || !slices.Equal(as.Tags, []string{"prod", "stable"}) {
		t.Errorf("AssignTags = %+v, %v", as, err)
	}
	if err := c.RemoveTags(ctx, "web", []string{"prod"}); err != nil {
		t.Fatal(err)
	}
	if b := f.body(); b["name"] != "web" || len(b["tags"].([]any)) != 1 {
		t.Errorf("RemoveTags sent %v", b)
	}
	want := []string{"GET /templates", "GET /templates/team%2Fweb:v1", "DELETE /templates/tpl-1", "GET /templates/tpl-1/tags", "POST /templates/tags", "DELETE /templates/tags"}
	if log := f.requestLog(); !slices.Equal(log, want) {
		t.Errorf("requests %q, want %q", log, want)
	}
}

func TestExists(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	cases := []struct {
		alias string
		want  bool
	}{
		{"mine", true},
		{"theirs", true}, // 403: taken by another team
		{"free", false},  // 404
	}
	for _, tc := range cases {
		t.Run(tc.alias, func(t *testing.T) {
			t.Parallel()
			got, err := f.client().Exists(t.Context(), tc.alias)
			if err != nil || got != tc.want {
				t.Errorf("Exists(%s) = %v, %v; want %v", tc.alias, got, err, tc.want)
			}
		})
	}
}
