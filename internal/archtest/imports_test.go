package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	"github.com/warren-sandbox/warren/internal/archtest/importgroup"
)

// TestImportGrouping: every Go file but generated ones groups its imports
// as goimports -local github.com/warren-sandbox/warren does (standard
// library, third-party, ours). scripts/fix-imports.sh regroups them.
func TestImportGrouping(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	files := 0
	err = importgroup.Walk(root, func(path string) error {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, p := range importgroup.Check(fset, f) {
			t.Errorf("%s: %s (run scripts/fix-imports.sh)", rel, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("checked only %d files under %s", files, root)
	}
}
