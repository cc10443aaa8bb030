package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSDKModules keeps the Go SDK light: a program that imports
// pkg/warren compiles none of the server's or the tests' heavy modules.
// The Dockerfile converter (BuildKit) is a separate package a program
// links in only to build from Dockerfiles.
func TestSDKModules(t *testing.T) {
	t.Parallel()
	forbidden := []string{
		"github.com/moby/buildkit",
		"helm.sh/",
		"k8s.io/",
		"sigs.k8s.io/",
		"github.com/jackc/pgx",
		"modernc.org/sqlite",
		"github.com/chromedp/",
		"gonum.org/",
	}
	for _, pkg := range []string{"pkg/warren", "api/wire", "api/rest"} {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", mod+pkg).Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			for _, m := range strings.Fields(string(out)) {
				for _, f := range forbidden {
					if strings.HasPrefix(m, f) {
						t.Errorf("%s depends on module %s", pkg, m)
					}
				}
			}
		})
	}
}
