package oci

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDropImage: a used image leaves its path at once, whether its removal
// goes on in the background or (another one still going) right away, and
// none of it stays behind.
func TestDropImage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		leftover bool // a used image still being removed
	}{
		{"background", false},
		{"previous one still going", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), imageDir)
			if err := os.Mkdir(img, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(img, "pages.img"), make([]byte, 1<<20), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.leftover {
				if err := os.Mkdir(img+usedSuffix, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			dropImage(t.Context(), "sb", img)
			if _, err := os.Lstat(img); !os.IsNotExist(err) {
				t.Fatalf("image still at %s after dropImage: %v", img, err)
			}
			if tc.leftover {
				return // the earlier removal owns img.used
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, err := os.Lstat(img + usedSuffix); os.IsNotExist(err) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("used image never removed")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
