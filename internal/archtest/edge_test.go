package archtest

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// routeLiteral is a ServeMux pattern with a method: "GET /sandboxes/{id}".
var routeLiteral = regexp.MustCompile(`^(GET|HEAD|POST|PUT|PATCH|DELETE) (/\S*)$`)

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// TestOneEdge: the REST API has one edge. Its routes are declared once, in
// internal/apiserver's table, which both the one-machine server and the
// cluster's API role serve: no other package of the server names one of
// api/openapi.yaml's routes as a pattern. And E2B's error body is written
// once, by internal/httperr: no other package spells its error_code.
// envd and the interpreter run inside sandboxes and serve APIs of their
// own; --metrics-listen serves GET /metrics alone on its own port.
func TestOneEdge(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	paths := openAPIPaths(t, filepath.Join(root, "api", "openapi.yaml"))
	own := []string{"internal/apiserver/", "internal/envd/", "internal/interpreter/"}
	allowed := map[string]string{"internal/server/": "GET /metrics"}
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			for _, lit := range stringLiterals(t, p) {
				if strings.Contains(lit, "error_code") && !strings.HasPrefix(rel, "internal/httperr/") {
					t.Errorf("%s spells E2B's error_code (%q): write error bodies with internal/httperr", rel, lit)
				}
				m := routeLiteral.FindStringSubmatch(lit)
				if m == nil || !paths[pathParam.ReplaceAllString(m[2], "{}")] || hasAnyPrefix(rel, own) ||
					allowed[dirOf(rel)] == lit {
					continue
				}
				t.Errorf("%s names the REST route %q: routes are declared once, in internal/apiserver's table (routes.go)", rel, lit)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// openAPIPaths are the paths api/openapi.yaml describes, parameters
// unnamed ("/sandboxes/{}").
func openAPIPaths(t *testing.T, file string) map[string]bool {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":") {
			out[pathParam.ReplaceAllString(strings.TrimSuffix(strings.TrimSpace(line), ":"), "{}")] = true
		}
	}
	if err := sc.Err(); err != nil || len(out) < 30 {
		t.Fatalf("reading the paths of %s: %d found, %v", file, len(out), err)
	}
	return out
}

// stringLiterals are the string constants written in a Go file.
func stringLiterals(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

func dirOf(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) < 3 {
		return rel
	}
	return parts[0] + "/" + parts[1] + "/"
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
