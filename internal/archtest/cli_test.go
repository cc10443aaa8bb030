package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOneCLILibrary: every command of the binary parses its flags with
// cobra, so help, completion and flag spelling are the same everywhere.
// Go's flag package (with a re-parser around it) or a second CLI library
// must not come back into cmd/warren.
func TestOneCLILibrary(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go tool")
	}
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, mod+"cmd/warren").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{"flag", "github.com/urfave/cli", "github.com/alecthomas/kingpin", "github.com/peterbourgon/ff"}
	cobra := false
	for _, imp := range strings.Fields(string(out)) {
		cobra = cobra || imp == "github.com/spf13/cobra"
		for _, f := range forbidden {
			if imp == f || strings.HasPrefix(imp, f+"/") {
				t.Errorf("cmd/warren imports %s: every command parses its flags with cobra", imp)
			}
		}
	}
	if !cobra {
		t.Error("cmd/warren does not import cobra")
	}
}
