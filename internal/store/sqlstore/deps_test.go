package sqlstore

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDriver: the shared store compiles without either database's
// driver; what is one database's lives in its own package, behind DB and
// Dialect.
func TestNoDriver(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go tool")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, driver := range []string{"github.com/jackc/", "modernc.org/", "github.com/warren-sandbox/warren/internal/store/sqlite", "github.com/warren-sandbox/warren/internal/store/postgres"} {
			if strings.HasPrefix(dep, driver) {
				t.Errorf("sqlstore depends on %s", dep)
			}
		}
	}
}
