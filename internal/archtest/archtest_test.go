package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/warren-sandbox/warren/"

// rooms are the packages that use the sandbox manager (internal/lifecycle)
// through narrow interfaces of their own; the manager imports none of them.
var rooms = []string{"internal/retention", "internal/history", "internal/buildrun", "internal/pool", "internal/park", "internal/snapshot"}

// TestImportRules checks what each package may (transitively) depend on.
func TestImportRules(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go tool")
	}
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		// envd runs inside sandboxes: none of the server may leak into it.
		{"cmd/envd", []string{"internal/sandbox", "internal/lifecycle", "internal/apiserver", "internal/proxy", "internal/runtime", "internal/store", "internal/network", "internal/template"}},
		// The API edge talks to the manager through interfaces it declares,
		// typed in the leaf sandbox: it compiles in neither the manager nor
		// any runtime. The same holds for the cluster's API role and for
		// telemetry and usage, which read the manager's census.
		{"internal/apiserver", []string{"internal/lifecycle", "internal/runtime", "internal/network", "internal/envd"}},
		{"internal/cluster", []string{"internal/lifecycle", "internal/runtime", "internal/network"}},
		{"internal/telemetry", []string{"internal/lifecycle", "internal/runtime"}},
		{"internal/usage", []string{"internal/lifecycle", "internal/runtime"}},
		// The leaf of shared sandbox types: no manager, runtime or edge.
		{"internal/sandbox", []string{"internal/lifecycle", "internal/runtime", "internal/network", "internal/apiserver", "internal/cluster", "internal/server", "internal/proxy"}},
		// The manager sees backends only through the runtime interface.
		{"internal/lifecycle", []string{"internal/runtime/oci", "internal/network", "internal/apiserver", "internal/store/sqlite"}},
		// The manager does the lifecycle; the rooms beside it use it
		// through interfaces they declare, never the other way.
		{"internal/lifecycle", rooms},
		// A room reaches the manager through its own interface only.
		{"internal/retention", []string{"internal/lifecycle", "internal/runtime", "internal/server"}},
		{"internal/history", []string{"internal/lifecycle", "internal/runtime", "internal/server"}},
		{"internal/pool", []string{"internal/lifecycle", "internal/server"}},
		// Parking exports and rebuilds through a backend it is handed.
		{"internal/park", []string{"internal/lifecycle", "internal/runtime/oci", "internal/server"}},
		{"internal/snapshot", []string{"internal/lifecycle", "internal/runtime", "internal/server"}},
		// A command run through envd is a client of envd's API only.
		{"internal/envdexec", []string{"internal/lifecycle", "internal/runtime", "internal/store", "internal/envd"}},
		// The proxy declares what it needs (Resolver, Target): the manager
		// implements it, so the proxy never reaches into the manager.
		{"internal/proxy", []string{"internal/sandbox", "internal/lifecycle", "internal/store", "internal/runtime", "internal/network", "internal/apiserver"}},
		// Commands are wired by the server package, never the other way.
		{"internal/apiserver", []string{"internal/server", "internal/bench", "internal/store/sqlite"}},
		{"internal/lifecycle", []string{"internal/server", "internal/bench"}},
		// The public SDK and everything under it are importable from
		// outside the module, which internal/ packages are not: they speak
		// to the server through api/ only (the REST types and envd's
		// stubs). Test files may still import internal/ to check the two
		// sides agree; go list -deps leaves them out.
		{"pkg/warren/...", []string{"internal/"}},
		// The Dockerfile front end is the client side of the template API
		// only: it makes the REST build spec and needs none of envd's stubs.
		{"pkg/warren/dockerfile", []string{"api/gen"}},
		// The builder runs RUN steps through the Runner it declares.
		{"internal/template/builder", []string{"internal/sandbox", "internal/lifecycle", "internal/apiserver", "internal/runtime", "internal/network"}},
		// The harness measures a server from outside, as a client would.
		{"internal/bench", []string{"internal/sandbox", "internal/lifecycle", "internal/store", "internal/runtime", "internal/apiserver", "internal/server"}},
		// The MCP server is a client of the API, through the SDK only.
		{"internal/mcpserver", []string{"internal/sandbox", "internal/lifecycle", "internal/store", "internal/runtime", "internal/apiserver", "internal/server", "internal/envd", "internal/network"}},
		// The leaf every package uses imports nothing of ours.
		{"internal/errdefs", []string{"internal/"}},
		// The outbound address guard is a leaf too.
		{"internal/netguard", []string{"internal/sandbox", "internal/lifecycle", "internal/store", "internal/runtime", "internal/network", "internal/template"}},
		// The network policy is shared by every layer, so it depends on none.
		{"internal/netpolicy", []string{"internal/"}},
		// The public protocol is shared by everything, envd and the SDK
		// included: it imports nothing of ours.
		{"api/wire", []string{"internal/", "pkg/", "api/rest", "api/gen"}},
		// Every HTTP edge writes its errors through httperr: it knows the
		// error classes and nothing else of ours.
		{"internal/httperr", []string{"internal/sandbox", "internal/lifecycle", "internal/store", "internal/runtime", "internal/apiserver", "internal/proxy", "internal/cluster", "internal/server", "internal/log"}},
	}
	for _, tc := range tests {
		t.Run(tc.pkg, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", mod+tc.pkg).Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep == mod+tc.pkg {
					continue
				}
				for _, f := range tc.forbidden {
					if within(dep, mod+f) {
						t.Errorf("%s depends on %s", tc.pkg, dep)
					}
				}
			}
		})
	}
}

// within reports whether pkg is dir or lies under it; a dir ending in "/"
// is a plain prefix. internal/sandbox does not cover internal/sandboxlog.
func within(pkg, dir string) bool {
	if strings.HasSuffix(dir, "/") {
		return strings.HasPrefix(pkg, dir)
	}
	return pkg == dir || strings.HasPrefix(pkg, dir+"/")
}

// TestPackageDocs: every package of ours says what it is for (generated
// code excepted).
func TestPackageDocs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go tool")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Doc}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, doc, _ := strings.Cut(line, "\t")
		if strings.HasPrefix(pkg, mod+"api/gen/") {
			continue
		}
		if strings.TrimSpace(doc) == "" {
			t.Errorf("%s has no package doc comment", pkg)
		}
	}
}
