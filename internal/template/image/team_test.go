package image

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const testTeam = "team-a"

// TestImportedImagesPerTeam: an imported image is its team's. Another
// team resolves its ref (or digest) as if it were not imported, going to
// the registry; importing the same ref replaces only the team's own
// image; List names each image's team.
func TestImportedImagesPerTeam(t *testing.T) {
	e := newEnv(t)
	var asked []string // registry requests
	e.p.transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		asked = append(asked, r.URL.String())
		return nil, errors.New("no registry here")
	})
	imgA := imageOf(t, v1.Config{Cmd: []string{"a"}}, layerOf(t, file("who", "a")))
	imgB := imageOf(t, v1.Config{Cmd: []string{"b"}}, layerOf(t, file("who", "b")))
	importAs := func(team string, img v1.Image) {
		path := filepath.Join(t.TempDir(), "save.tar")
		writeDockerTarball(t, path, false, map[string]v1.Image{"example.invalid/app:1": img})
		if _, err := e.p.Import(ctx, team, path, nil); err != nil {
			t.Fatal(err)
		}
	}
	importAs(testTeam, imgA)
	digestA, _ := imgA.ConfigName()

	for _, ref := range []string{"example.invalid/app:1", digestA.String()} {
		if img, err := e.p.Resolve(ctx, testTeam, ref, nil, nil); err != nil || readFile(t, filepath.Join(img.Layers[0], "who")) != "a" {
			t.Errorf("the importing team's Resolve(%s) = %+v, %v", ref, img, err)
		}
		asked = nil
		if img, err := e.p.Resolve(ctx, "team-b", ref, nil, nil); err == nil || img != nil {
			t.Errorf("another team's Resolve(%s) = %+v, %v; want the registry's failure", ref, img, err)
		}
		if ref == "example.invalid/app:1" && len(asked) == 0 {
			t.Errorf("another team's Resolve(%s) did not go to the registry", ref)
		}
	}

	importAs("team-b", imgB)
	for team, want := range map[string]string{testTeam: "a", "team-b": "b"} {
		img, err := e.p.Resolve(ctx, team, "example.invalid/app:1", nil, nil)
		if err != nil || readFile(t, filepath.Join(img.Layers[0], "who")) != want {
			t.Errorf("%s's image after team-b imported the same ref: %+v, %v", team, img, err)
		}
	}
	list, err := e.p.List()
	if err != nil || len(list) != 2 || list[0].Team != testTeam || list[1].Team != "team-b" {
		t.Errorf("List = %+v, %v", list, err)
	}
}

// TestImportedBeforeTeams: an index entry from before teams (no team)
// belongs to the default team.
func TestImportedBeforeTeams(t *testing.T) {
	e := newEnv(t)
	e.offline(t)
	path := filepath.Join(t.TempDir(), "save.tar")
	writeDockerTarball(t, path, false, map[string]v1.Image{"example.invalid/old:1": imageOf(t, v1.Config{}, layerOf(t, file("f", "x")))})
	if _, err := e.p.Import(ctx, "", path, nil); err != nil {
		t.Fatal(err)
	}
	// Rewrite the index as an older warren wrote it: no team field.
	data, err := os.ReadFile(e.p.indexPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.p.indexPath(), stripTeam(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if list, _ := e.p.List(); len(list) != 1 || list[0].Team != "default" {
		t.Fatalf("List = %+v, want one image of team default", list)
	}
	if _, err := e.p.Resolve(ctx, "default", "example.invalid/old:1", nil, nil); err != nil {
		t.Errorf("the default team's Resolve: %v", err)
	}
}

// stripTeam removes the "team" lines of an indented index.
func stripTeam(data []byte) []byte {
	var kept []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `"team":`) {
			kept = append(kept, line)
		}
	}
	return []byte(strings.Join(kept, "\n"))
}
