package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// Several goroutines, each owning its records, hammer one store at once; run
// under -race this also checks the store's own locking.
const (
	writers      = 8
	perWriter    = 15
	totalRecords = writers * perWriter
)

var concurrentTests = []test{
	{"Writes", func(ctx context.Context, t *testing.T, s store.Store) {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					if err := writeSome(ctx, s, w, i); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		checkCounts(ctx, t, s)
	}},
	{"CreateRace", testCreateRace},
	{"BuildsAndTags", testConcurrentBuilds},
}

// testConcurrentBuilds has every writer build one template and move its
// "latest" tag at once, as parallel builds of one template do: each tag
// must end on one of the template's builds, with no build lost.
func testConcurrentBuilds(ctx context.Context, t *testing.T, s store.Store) {
	must(t, "PutTemplate", s.PutTemplate(ctx, newTemplate("t1", 0)))
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, i)
				for _, err := range []error{
					s.CreateBuild(ctx, newBuild(id, "t1", i)),
					s.SetTag(ctx, "t1", "latest", id),
					s.SetTag(ctx, "t1", fmt.Sprintf("w%d", w), id),
				} {
					if err != nil {
						t.Errorf("build %s: %v", id, err)
						return
					}
				}
				if _, err := s.ListBuilds(ctx, "t1"); err != nil {
					t.Errorf("ListBuilds: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	builds, err := s.ListBuilds(ctx, "t1")
	must(t, "ListBuilds", err)
	wantEqual(t, "builds after concurrent writes", len(builds), totalRecords)
	tags, err := s.ListTags(ctx, "t1")
	must(t, "ListTags", err)
	wantEqual(t, "tags after concurrent writes", len(tags), writers+1)
	for _, tag := range tags {
		if _, err := s.GetBuild(ctx, tag.BuildID); err != nil {
			t.Errorf("tag %s points at %q: %v", tag.Tag, tag.BuildID, err)
		}
	}
}

// testCreateRace has every writer claim the same sandbox id, alias and key
// hash at once: check-then-insert must be atomic, so exactly one wins each
// and the rest get ErrAlreadyExists.
func testCreateRace(ctx context.Context, t *testing.T, s store.Store) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // guards wins
		wins = map[string]int{}
	)
	claim := func(what string, err error) {
		switch {
		case err == nil:
			mu.Lock()
			wins[what]++
			mu.Unlock()
		case !errors.Is(err, errdefs.ErrAlreadyExists):
			t.Errorf("claiming %s: %v", what, err)
		}
	}
	for w := range writers {
		wg.Go(func() {
			claim("sandbox", s.CreateSandbox(ctx, newSandbox("same", w)))
			claim("alias", s.PutTemplate(ctx, newTemplate(fmt.Sprintf("t%d", w), w, "shared")))
			k := newKey(fmt.Sprintf("k%d", w), "race", w)
			k.Hash = "same-hash"
			claim("key", s.CreateAPIKey(ctx, k))
		})
	}
	wg.Wait()
	wantEqual(t, "winners per record", wins, map[string]int{"sandbox": 1, "alias": 1, "key": 1})
}

// writeSome creates, updates and reads back one of each record.
func writeSome(ctx context.Context, s store.Store, w, i int) error {
	id := fmt.Sprintf("w%d-%d", w, i)
	sb := newSandbox(id, i)
	if err := s.CreateSandbox(ctx, sb); err != nil {
		return err
	}
	sb.State = store.SandboxPaused
	if err := s.UpdateSandbox(ctx, sb); err != nil {
		return err
	}
	got, err := s.GetSandbox(ctx, id)
	if err != nil {
		return err
	}
	if got.State != store.SandboxPaused {
		return fmt.Errorf("sandbox %s: state %q after update", id, got.State)
	}
	if err := s.PutTemplate(ctx, newTemplate("t"+id, i, "alias-"+id)); err != nil {
		return err
	}
	if _, err := s.GetTemplate(ctx, "alias-"+id); err != nil {
		return err
	}
	if err := s.CreateAPIKey(ctx, newKey(id, "writer", i)); err != nil {
		return err
	}
	// Every writer also lists, so reads run alongside the writes.
	if _, err := s.ListSandboxes(ctx); err != nil {
		return err
	}
	return nil
}

func checkCounts(ctx context.Context, t *testing.T, s store.Store) {
	sbs, err := s.ListSandboxes(ctx)
	must(t, "ListSandboxes", err)
	tpls, err := s.ListTemplates(ctx)
	must(t, "ListTemplates", err)
	keys, err := s.ListAPIKeys(ctx)
	must(t, "ListAPIKeys", err)
	for name, n := range map[string]int{"sandboxes": len(sbs), "templates": len(tpls), "api keys": len(keys)} {
		if n != totalRecords {
			t.Errorf("%d %s after concurrent writes, want %d", n, name, totalRecords)
		}
	}
}
