package apiserver

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/builder"
	"github.com/warren-sandbox/warren/internal/template/image"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// fakeImages keeps imported images per team as image.Puller does, for
// the API (Images) and the builder (builder.Images). An upload whose body
// is a ref ("example.test/…") imports that ref; any other upload imports
// example.test/img:1. The default team starts with example.test/img:1.
type fakeImages struct {
	mu       sync.Mutex
	imgs     []image.ImportedImage
	resolved []string // "team ref", per Resolve
}

func newFakeImages() *fakeImages {
	return &fakeImages{imgs: []image.ImportedImage{{Team: store.DefaultTeam, Ref: "example.test/img:1"}}}
}

func (f *fakeImages) Import(_ context.Context, team, path string, _ func(string)) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ref := "example.test/img:1"
	if s := string(data); strings.HasPrefix(s, "example.test/") {
		ref = s
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.imgs = slices.DeleteFunc(f.imgs, func(i image.ImportedImage) bool { return i.Ref == ref && i.Team == team })
	f.imgs = append(f.imgs, image.ImportedImage{Team: team, Ref: ref})
	return []string{ref}, nil
}

func (f *fakeImages) List() ([]image.ImportedImage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.imgs), nil
}

// Resolve finds only team's imports; it has no registry to try.
func (f *fakeImages) Resolve(_ context.Context, team, ref string, _ *wire.RegistryAuth, _ func(string)) (*builder.BaseImage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resolved = append(f.resolved, team+" "+ref)
	for _, i := range f.imgs {
		if i.Team == team && i.Ref == ref {
			return nil, errdefs.New(errdefs.ErrUnavailable, "resolved "+ref+"; the fake has no layers")
		}
	}
	return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("image %s not found", ref))
}

// TestImagesPerTeam: an imported image is its team's, as a template is:
// other teams do not list it and their builds cannot use it (the builder
// looks for it among their own imports); the admin lists every team's.
func TestImagesPerTeam(t *testing.T) {
	f := newRouteFixture(t)
	mine := f.key // team default, which holds example.test/img:1
	other := f.addKey(t, apikey.Spec{Name: "b", Team: "beta"})
	admin := f.addKey(t, apikey.Spec{Name: "root", Admin: true})
	if st, body := f.call(t, other, "POST", "/images", "example.test/beta:1"); st != 201 {
		t.Fatalf("beta's import: %d %s", st, body)
	}
	for _, c := range []struct {
		who, key     string
		sees, hidden []string
	}{
		{"default", mine, []string{"example.test/img:1"}, []string{"example.test/beta:1"}},
		{"beta", other, []string{"example.test/beta:1"}, []string{"example.test/img:1"}},
		{"admin", admin, []string{"example.test/img:1", "example.test/beta:1"}, nil},
	} {
		st, body := f.call(t, c.key, "GET", "/images", "")
		if st != 200 {
			t.Fatalf("%s lists images: %d %s", c.who, st, body)
		}
		for _, ref := range c.sees {
			if !strings.Contains(body, ref) {
				t.Errorf("%s's list lacks %s: %s", c.who, ref, body)
			}
		}
		for _, ref := range c.hidden {
			if strings.Contains(body, ref) {
				t.Errorf("%s's list shows %s: %s", c.who, ref, body)
			}
		}
	}
	// A build of beta FROM the default team's image asks for beta's.
	msg := failedBuild(t, f, other, "example.test/img:1")
	if !strings.Contains(msg, "not found") {
		t.Errorf("beta's build FROM another team's image: %q, want not found", msg)
	}
	if msg := failedBuild(t, f, mine, "example.test/img:1"); !strings.Contains(msg, "resolved") {
		t.Errorf("the default team's build FROM its image: %q, want it resolved", msg)
	}
	f.images.mu.Lock()
	defer f.images.mu.Unlock()
	if want := []string{"beta example.test/img:1", "default example.test/img:1"}; !slices.Equal(f.images.resolved, want) {
		t.Errorf("the builder resolved %v, want %v", f.images.resolved, want)
	}
}

// failedBuild builds a template FROM ref with key and returns the reason
// the build failed with.
func failedBuild(t *testing.T, f *routeFixture, key, ref string) string {
	t.Helper()
	st, body := f.call(t, key, "POST", "/v3/templates", fmt.Sprintf(`{"name":"from-%d"}`, time.Now().UnixNano()))
	tpl, build := field(body, "templateID"), field(body, "buildID")
	if st != 202 {
		t.Fatalf("request build: %d %s", st, body)
	}
	base := "/templates/" + tpl + "/builds/" + build
	if st, body := f.call(t, key, "POST", "/v2"+base, `{"fromImage":"`+ref+`","steps":[]}`); st != 202 {
		t.Fatalf("start build: %d %s", st, body)
	}
	var status string
	err := testutil.Poll(10*time.Second, 20*time.Millisecond, func() error {
		_, status = f.call(t, key, "GET", base+"/status", "")
		if field(status, "status") != "error" {
			return fmt.Errorf("build status %s", status)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return status
}
