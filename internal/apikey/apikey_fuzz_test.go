package apikey

import (
	"regexp"
	"strings"
	"testing"
)

var keyForm = regexp.MustCompile(`^e2b_[0-9a-f]{40}$`)

// FuzzKey checks the functions that take a key as a client sent it: Valid
// accepts exactly the documented form, Mask never shows the secret whole,
// and a key verifies against its own hash and nothing else.
func FuzzKey(f *testing.F) {
	key, err := Generate()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{key, strings.ToUpper(key), key + "\n", Prefix, "", "e2b_" + strings.Repeat("g", 40),
		"Bearer " + key, strings.Repeat("é", 22), "sk_" + key} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if got, want := Valid(key), keyForm.MatchString(key); got != want {
			t.Fatalf("Valid(%q) = %v, want %v", key, got, want)
		}
		m := Mask(key)
		body := strings.TrimPrefix(key, Prefix)
		if len(body) > 2*maskKeep && strings.Contains(m, body) {
			t.Fatalf("Mask(%q) = %q shows the whole secret", key, m)
		}
		if len(m) > len(Prefix)+2*maskKeep+len("…") {
			t.Fatalf("Mask(%q) = %q is longer than a masked key", key, m)
		}
		h := Hash(key)
		if !Verify(key, h) {
			t.Fatalf("%q does not verify against its own hash", key)
		}
		if Verify(key+"0", h) || Verify(key, Hash(key+"0")) {
			t.Fatalf("%q verifies against another key's hash", key)
		}
	})
}
