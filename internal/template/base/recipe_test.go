package base

import (
	"regexp"
	"slices"
	"testing"
)

func TestRecipeHash(t *testing.T) {
	t.Parallel()
	base := newRecipe("bookworm", []string{"git", "curl", "python3"}).hash()
	bumped := newRecipe("bookworm", []string{"git", "curl", "python3"})
	bumped.ConfigVersion++
	cases := []struct {
		name string
		hash string
		same bool
	}{
		{"order and duplicates ignored", newRecipe("bookworm", []string{"python3", "git", "curl", "git"}).hash(), true},
		{"suite changes it", newRecipe("trixie", []string{"git", "curl", "python3"}).hash(), false},
		{"added package changes it", newRecipe("bookworm", []string{"git", "curl", "python3", "jq"}).hash(), false},
		{"removed package changes it", newRecipe("bookworm", []string{"git", "curl"}).hash(), false},
		{"config version changes it", bumped.hash(), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.hash == base) != c.same {
				t.Errorf("hash %s vs %s: same=%v, want %v", c.hash, base, c.hash == base, c.same)
			}
		})
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(base) {
		t.Errorf("hash %q is not 16 hex characters", base)
	}
}

func TestPackagesSortedAndComplete(t *testing.T) {
	t.Parallel()
	if !slices.IsSorted(Packages) {
		t.Error("Packages should stay sorted, for reviewable diffs")
	}
	for _, want := range []string{"bash", "git", "curl", "python3", "python3-pip", "python3-venv", "nodejs", "sudo", "ca-certificates"} {
		if !slices.Contains(Packages, want) {
			t.Errorf("Packages lacks %s", want)
		}
	}
	if slices.Contains(Packages, "npm") {
		t.Error("npm pulls ~460 packages; see the Packages comment")
	}
}
