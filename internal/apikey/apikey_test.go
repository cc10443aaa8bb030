package apikey

import (
	"regexp"
	"strings"
	"testing"
)

var keyRE = regexp.MustCompile(`^e2b_[0-9a-f]{40}$`)

func TestGenerate(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		k, err := Generate()
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if !keyRE.MatchString(k) {
			t.Fatalf("Generate() = %q, want match %s", k, keyRE)
		}
		if !Valid(k) {
			t.Fatalf("Valid(%q) = false for a generated key", k)
		}
		if seen[k] {
			t.Fatalf("Generate returned %q twice", k)
		}
		seen[k] = true
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	good := "e2b_" + strings.Repeat("0123456789abcdef", 3)[:40]
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"well formed", good, true},
		{"empty", "", false},
		{"no prefix", good[4:], false},
		{"other prefix", "e2c_" + good[4:], false},
		{"uppercase hex", "e2b_" + strings.ToUpper(good[4:]), false},
		{"too short", good[:len(good)-1], false},
		{"too long", good + "0", false},
		{"non hex", good[:len(good)-1] + "g", false},
		{"prefix only", "e2b_", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Valid(tt.key); got != tt.want {
				t.Errorf("Valid(%q) = %v, want %v", tt.key, got, tt.want)
			}
			if want := keyRE.MatchString(tt.key); want != tt.want {
				t.Errorf("test case disagrees with the regexp for %q", tt.key)
			}
		})
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	// sha256("abc") from FIPS 180-2, so the encoding (lowercase hex) is pinned.
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := Hash("abc"); got != abc {
		t.Errorf("Hash(abc) = %s, want %s", got, abc)
	}
	k, _ := Generate()
	if Hash(k) != Hash(k) {
		t.Error("Hash is not deterministic")
	}
	if !Verify(k, Hash(k)) {
		t.Error("Verify(k, Hash(k)) = false")
	}
	if Verify(k, Hash(k+"x")) {
		t.Error("Verify accepted the hash of another key")
	}
}

func TestEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"abc", "ab", false},
		{"", "a", false},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key, want string
	}{
		{"key", "e2b_ab12" + strings.Repeat("0", 32) + "9f0e", "e2b_ab12…9f0e"},
		{"no prefix", "abcd" + strings.Repeat("x", 12) + "wxyz", "abcd…wxyz"},
		{"short with prefix", "e2b_abc", "e2b_…"},
		{"short", "secret", "…"},
		{"empty", "", "…"},
		{"prefix only", "e2b_", "e2b_…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Mask(tt.key); got != tt.want {
				t.Errorf("Mask(%q) = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}

func TestNewID(t *testing.T) {
	t.Parallel()
	idRE := regexp.MustCompile(`^[a-z0-9]{20}$`)
	seen := map[string]bool{}
	counts := map[rune]int{}
	const n = 2000
	for range n {
		id := NewID()
		if !idRE.MatchString(id) {
			t.Fatalf("NewID() = %q, want match %s", id, idRE)
		}
		if seen[id] {
			t.Fatalf("NewID returned %q twice", id)
		}
		seen[id] = true
		for _, c := range id {
			counts[c]++
		}
	}
	// Every character should turn up: 40,000 draws over 36 symbols puts the
	// expected count near 1,100, so a missing one means a broken alphabet.
	if len(counts) != len(idAlphabet) {
		t.Errorf("NewID used %d distinct characters, want %d", len(counts), len(idAlphabet))
	}
}
