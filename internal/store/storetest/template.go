package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// newTemplate returns a template with every field set.
func newTemplate(id string, createdMin int, aliases ...string) *store.Template {
	return &store.Template{
		ID:          id,
		Aliases:     aliases,
		Backend:     "oci",
		RootfsPath:  "/var/lib/warren/templates/" + id + "/rootfs",
		Layers:      []string{"/var/lib/warren/layers/" + id + "-top", "/var/lib/warren/templates/" + id + "/rootfs"},
		Env:         map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
		Workdir:     "/home/user/app",
		User:        "root",
		ReadyCmd:    "test -f /tmp/ready",
		Labels:      map[string]string{"org.opencontainers.image.source": "example", "tier": "base"},
		CPUCount:    2,
		MemoryMB:    512,
		DiskMB:      2048,
		EnvdVersion: "0.2.0",
		StartCmd:    "python -m http.server",
		ReadyPort:   8000,
		BuildID:     "build-" + id,
		Public:      true,
		TeamID:      "team1",
		CreatedAt:   at(createdMin),
		UpdatedAt:   at(createdMin + 1),
		SizeBytes:   1 << 33, // past 32 bits on purpose
	}
}

// storedTemplate returns t as a store hands it back.
func storedTemplate(t *store.Template) *store.Template {
	c := *t
	c.Aliases = nilIfEmpty(slices.Clone(t.Aliases))
	c.Layers = nilIfEmpty(slices.Clone(t.Layers))
	c.Env = nilIfEmptyMap(maps.Clone(t.Env))
	c.Labels = nilIfEmptyMap(maps.Clone(t.Labels))
	c.CreatedAt = t.CreatedAt.UTC()
	c.UpdatedAt = t.UpdatedAt.UTC()
	return &c
}

// getTemplate fetches idOrAlias and compares it with want.
func getTemplate(ctx context.Context, t *testing.T, s store.Store, idOrAlias string, want *store.Template) {
	t.Helper()
	got, err := s.GetTemplate(ctx, idOrAlias)
	must(t, "GetTemplate "+idOrAlias, err)
	wantEqual(t, "GetTemplate "+idOrAlias, got, storedTemplate(want))
}

var templateTests = append([]test{
	{"PutGetByIDAndAlias", func(ctx context.Context, t *testing.T, s store.Store) {
		tpl := newTemplate("t1", 0, "python", "py3")
		must(t, "PutTemplate", s.PutTemplate(ctx, tpl))
		for _, key := range []string{"t1", "python", "py3"} {
			getTemplate(ctx, t, s, key, tpl)
		}
		_, err := s.GetTemplate(ctx, "node")
		wantErr(t, "GetTemplate unknown", err, errdefs.ErrNotFound)
	}},
	{"NoAliases", func(ctx context.Context, t *testing.T, s store.Store) {
		tpl := &store.Template{ID: "bare", Aliases: []string{}}
		must(t, "PutTemplate", s.PutTemplate(ctx, tpl))
		getTemplate(ctx, t, s, "bare", tpl)
	}},
	{"PutReplaces", func(ctx context.Context, t *testing.T, s store.Store) {
		must(t, "PutTemplate", s.PutTemplate(ctx, newTemplate("t1", 0, "python", "py3")))
		// Replacing drops "py3", keeps "python", adds "py", reorders.
		next := newTemplate("t1", 0, "py", "python")
		next.BuildID, next.SizeBytes, next.Public = "build-2", 7, false
		must(t, "PutTemplate again", s.PutTemplate(ctx, next))
		getTemplate(ctx, t, s, "t1", next)
		getTemplate(ctx, t, s, "py", next)
		_, err := s.GetTemplate(ctx, "py3")
		wantErr(t, "GetTemplate dropped alias", err, errdefs.ErrNotFound)
		list, err := s.ListTemplates(ctx)
		must(t, "ListTemplates", err)
		wantEqual(t, "ListTemplates", ids(list), []string{"t1"})
		// The dropped alias is free for another template.
		must(t, "PutTemplate taking freed alias", s.PutTemplate(ctx, newTemplate("t2", 1, "py3")))
		getTemplate(ctx, t, s, "py3", newTemplate("t2", 1, "py3"))
	}},
	{"InvalidArgument", func(ctx context.Context, t *testing.T, s store.Store) {
		for name, tpl := range map[string]*store.Template{
			"nil":         nil,
			"no id":       {Aliases: []string{"a"}},
			"empty alias": {ID: "t1", Aliases: []string{""}},
			"alias twice": {ID: "t1", Aliases: []string{"a", "b", "a"}},
		} {
			wantErr(t, "PutTemplate "+name, s.PutTemplate(ctx, tpl), errdefs.ErrInvalidArgument)
		}
		_, err := s.GetTemplate(ctx, "t1")
		wantErr(t, "GetTemplate after rejected puts", err, errdefs.ErrNotFound)
	}},
	{"Delete", func(ctx context.Context, t *testing.T, s store.Store) {
		must(t, "PutTemplate", s.PutTemplate(ctx, newTemplate("t1", 0, "python")))
		must(t, "PutTemplate", s.PutTemplate(ctx, newTemplate("t2", 0, "node")))
		must(t, "DeleteTemplate", s.DeleteTemplate(ctx, "t1"))
		for _, key := range []string{"t1", "python"} {
			_, err := s.GetTemplate(ctx, key)
			wantErr(t, "GetTemplate deleted "+key, err, errdefs.ErrNotFound)
		}
		wantErr(t, "DeleteTemplate twice", s.DeleteTemplate(ctx, "t1"), errdefs.ErrNotFound)
		// Deleting by alias is not part of the contract: ids only.
		wantErr(t, "DeleteTemplate by alias", s.DeleteTemplate(ctx, "node"), errdefs.ErrNotFound)
		getTemplate(ctx, t, s, "node", newTemplate("t2", 0, "node"))
		// The deleted template's alias is free again.
		must(t, "PutTemplate reusing alias", s.PutTemplate(ctx, newTemplate("t3", 0, "python")))
		getTemplate(ctx, t, s, "python", newTemplate("t3", 0, "python"))
	}},
	{"ListOrder", func(ctx context.Context, t *testing.T, s store.Store) {
		list, err := s.ListTemplates(ctx)
		must(t, "ListTemplates empty", err)
		if len(list) != 0 {
			t.Fatalf("ListTemplates on an empty store returned %d records", len(list))
		}
		for _, tpl := range []*store.Template{
			newTemplate("b", 2, "bb"), newTemplate("c", 0), newTemplate("a", 2, "aa", "aaa"),
		} {
			must(t, "PutTemplate "+tpl.ID, s.PutTemplate(ctx, tpl))
		}
		list, err = s.ListTemplates(ctx)
		must(t, "ListTemplates", err)
		wantEqual(t, "ListTemplates order (oldest CreatedAt first, then id)", ids(list), []string{"c", "a", "b"})
		wantEqual(t, "listed record", list[1], storedTemplate(newTemplate("a", 2, "aa", "aaa")))
	}},
	{"Copies", func(ctx context.Context, t *testing.T, s store.Store) {
		in := newTemplate("t1", 0, "python", "py3")
		must(t, "PutTemplate", s.PutTemplate(ctx, in))
		want := storedTemplate(in)
		in.Aliases[0] = "changed"
		in.Layers[0], in.Env["LANG"], in.Labels["tier"] = "changed", "changed", "changed"
		got, err := s.GetTemplate(ctx, "t1")
		must(t, "GetTemplate", err)
		wantEqual(t, "GetTemplate after caller changed its input", got, want)
		got.Aliases[0] = "changed"
		got.Layers[0], got.Env["LANG"], got.Labels["tier"] = "changed", "changed", "changed"
		list, err := s.ListTemplates(ctx)
		must(t, "ListTemplates", err)
		list[0].Aliases[1] = "changed"
		list[0].Layers[1], list[0].Env["PATH"], list[0].Labels["tier"] = "changed", "changed", "changed"
		getTemplate(ctx, t, s, "python", want)
	}},
}, append(conflictTests(), templateFieldTests()...)...)

// templateFieldTests check the fields a template takes from its latest
// build round-trip, and that a replacing put clears the ones it leaves out.
func templateFieldTests() []test {
	bare := &store.Template{ID: "t1"}
	empty := &store.Template{ID: "t1", Layers: []string{}, Env: map[string]string{}, Labels: map[string]string{}}
	onlyNew := &store.Template{
		ID: "t1", Layers: []string{"/l/top", "/l/rootfs"}, Env: map[string]string{"A": "1"},
		Workdir: "/w", User: "u", ReadyCmd: "true", Labels: map[string]string{"k": "v"},
	}
	cases := []struct {
		name string
		puts []*store.Template // put in order; the last is what Get returns
		want *store.Template
	}{
		{"AllSet", []*store.Template{newTemplate("t1", 0)}, newTemplate("t1", 0)},
		{"OnlyNewFields", []*store.Template{onlyNew}, onlyNew},
		{"ZeroValues", []*store.Template{bare}, bare},
		{"EmptyCollectionsComeBackNil", []*store.Template{empty}, bare},
		{"ReplaceClears", []*store.Template{newTemplate("t1", 0), bare}, bare},
		{"ReplaceSets", []*store.Template{bare, onlyNew}, onlyNew},
	}
	out := make([]test, 0, len(cases))
	for _, c := range cases {
		out = append(out, test{"Fields/" + c.name, func(ctx context.Context, t *testing.T, s store.Store) {
			for i, tpl := range c.puts {
				must(t, fmt.Sprintf("PutTemplate #%d", i), s.PutTemplate(ctx, tpl))
			}
			getTemplate(ctx, t, s, "t1", c.want)
			list, err := s.ListTemplates(ctx)
			must(t, "ListTemplates", err)
			wantEqual(t, "ListTemplates", list, []*store.Template{storedTemplate(c.want)})
		}})
	}
	return out
}

// nilIfEmpty is the shape stores return empty lists in.
func nilIfEmpty[T any](l []T) []T {
	if len(l) == 0 {
		return nil
	}
	return l
}

// nilIfEmptyMap is the shape stores return empty maps in.
func nilIfEmptyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// conflictTests cover the rule that makes GetTemplate unambiguous: no name
// is both an alias and an id, or an alias of two templates. Each case starts
// from template t1 (aliases python, py3); a put that breaks the rule must
// change nothing.
func conflictTests() []test {
	cases := []struct {
		name string
		put  *store.Template
		want error
	}{
		{"AliasOfAnotherTemplate", newTemplate("t2", 1, "node", "python"), errdefs.ErrAlreadyExists},
		{"AliasIsAnotherTemplatesID", newTemplate("t2", 1, "t1"), errdefs.ErrAlreadyExists},
		{"IDIsAnotherTemplatesAlias", newTemplate("python", 1, "node"), errdefs.ErrAlreadyExists},
		{"AliasEqualToOwnID", newTemplate("t2", 1, "t2"), nil},
		{"ReplaceKeepingOwnAliases", newTemplate("t1", 1, "py3", "python"), nil},
	}
	out := make([]test, 0, len(cases))
	for _, c := range cases {
		out = append(out, test{"Conflict/" + c.name, func(ctx context.Context, t *testing.T, s store.Store) {
			orig := newTemplate("t1", 0, "python", "py3")
			must(t, "PutTemplate t1", s.PutTemplate(ctx, orig))
			err := s.PutTemplate(ctx, c.put)
			wantErr(t, "PutTemplate", err, c.want)
			if err == nil {
				getTemplate(ctx, t, s, c.put.ID, c.put)
				return
			}
			getTemplate(ctx, t, s, "t1", orig)
			getTemplate(ctx, t, s, "python", orig)
			_, err = s.GetTemplate(ctx, "node")
			wantErr(t, "GetTemplate alias from the rejected put", err, errdefs.ErrNotFound)
			list, err := s.ListTemplates(ctx)
			must(t, "ListTemplates", err)
			wantEqual(t, "ListTemplates after rejected put", ids(list), []string{"t1"})
		}})
	}
	return out
}
