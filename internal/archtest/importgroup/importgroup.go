// Package importgroup checks and fixes the grouping of a Go file's imports
// as goimports -local lays them out: the standard library, then third-party
// modules, then this module's own packages, each class in one group of its
// own, groups separated by a blank line. gofmt sorts within a group but
// never moves an import between groups, so this is what keeps the layout.
package importgroup

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Local is the import path prefix of this module's own packages.
const Local = "github.com/warren-sandbox/warren"

// class is an import's group, in the order the groups come.
type class int

const (
	std class = iota
	thirdParty
	local
)

func (c class) String() string {
	return [...]string{"standard library", "third-party", Local}[c]
}

// classOf sorts path into its class: a standard library path has no dot in
// its first element.
func classOf(path string) class {
	switch {
	case path == Local || strings.HasPrefix(path, Local+"/"):
		return local
	case strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return thirdParty
	}
	return std
}

// Check reports how file's imports break the layout; none when they keep
// it. Generated files are not checked. cgo's import "C" stands alone.
func Check(fset *token.FileSet, file *ast.File) []string {
	if ast.IsGenerated(file) {
		return nil
	}
	var problems []string
	var seen []class // the class of each group so far
	for _, d := range importDecls(file) {
		prevEnd := -1
		var group []*ast.ImportSpec
		flush := func() {
			if len(group) == 0 {
				return
			}
			problems = append(problems, checkGroup(group, &seen)...)
			group = nil
		}
		for _, s := range d.Specs {
			is := s.(*ast.ImportSpec)
			start, end := fset.Position(specStart(is)).Line, fset.Position(specEnd(is)).Line
			if prevEnd >= 0 && start > prevEnd+1 {
				flush()
			}
			group = append(group, is)
			prevEnd = end
		}
		flush() // a declaration ends its group
	}
	return problems
}

// checkGroup checks one group's imports share a class that no earlier
// group had and that does not come before an earlier group's.
func checkGroup(group []*ast.ImportSpec, seen *[]class) []string {
	var problems []string
	c := classOf(importPath(group[0]))
	for _, is := range group[1:] {
		if o := classOf(importPath(is)); o != c {
			problems = append(problems, fmt.Sprintf("%s import %s shares a group with %s import %s",
				o, is.Path.Value, c, group[0].Path.Value))
		}
	}
	if len(*seen) > 0 {
		last := (*seen)[len(*seen)-1]
		switch {
		case slices.Contains(*seen, c):
			problems = append(problems, fmt.Sprintf("a second group of %s imports (%s)", c, group[0].Path.Value))
		case c < last:
			problems = append(problems, fmt.Sprintf("%s imports (%s) come after %s ones", c, group[0].Path.Value, last))
		}
	}
	*seen = append(*seen, c)
	return problems
}

// importDecls are file's import declarations but cgo's.
func importDecls(file *ast.File) []*ast.GenDecl {
	var out []*ast.GenDecl
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		if len(gd.Specs) == 1 && importPath(gd.Specs[0].(*ast.ImportSpec)) == "C" {
			continue
		}
		out = append(out, gd)
	}
	return out
}

func importPath(is *ast.ImportSpec) string {
	p, err := strconv.Unquote(is.Path.Value)
	if err != nil {
		return is.Path.Value
	}
	return p
}

// specStart and specEnd bound an import with its comments.
func specStart(is *ast.ImportSpec) token.Pos {
	if is.Doc != nil {
		return is.Doc.Pos()
	}
	return is.Pos()
}

func specEnd(is *ast.ImportSpec) token.Pos {
	if is.Comment != nil {
		return is.Comment.End()
	}
	return is.End()
}

// Fix returns src with its imports regrouped (each import keeps its own
// comments) and whether anything changed. It refuses files it cannot
// regroup without losing something: several import declarations, or a
// comment in the block that belongs to no import.
func Fix(src []byte) ([]byte, bool, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.ImportsOnly)
	if err != nil {
		return nil, false, err
	}
	if len(Check(fset, file)) == 0 {
		return src, false, nil
	}
	decls := importDecls(file)
	if len(decls) != 1 {
		return nil, false, errors.New("several import declarations: regroup by hand")
	}
	d := decls[0]
	block, err := regroup(fset, file, d, src)
	if err != nil {
		return nil, false, err
	}
	start, end := fset.Position(d.Pos()).Offset, fset.Position(d.End()).Offset
	out := slices.Concat(src[:start], block, src[end:])
	if out, err = format.Source(out); err != nil {
		return nil, false, fmt.Errorf("formatting the result: %w", err)
	}
	return out, !bytes.Equal(out, src), nil
}

// regroup renders declaration d with its imports in their groups.
func regroup(fset *token.FileSet, file *ast.File, d *ast.GenDecl, src []byte) ([]byte, error) {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	type entry struct {
		path, name, text string
	}
	groups := make([][]entry, local+1)
	covered := map[*ast.CommentGroup]bool{}
	for _, s := range d.Specs {
		is := s.(*ast.ImportSpec)
		covered[is.Doc], covered[is.Comment] = true, true
		e := entry{path: importPath(is), text: string(src[off(specStart(is)):off(specEnd(is))])}
		if is.Name != nil {
			e.name = is.Name.Name
		}
		groups[classOf(e.path)] = append(groups[classOf(e.path)], e)
	}
	for _, cg := range file.Comments {
		if cg.Pos() > d.Pos() && cg.End() < d.End() && !covered[cg] {
			return nil, fmt.Errorf("line %d: a comment in the import block belongs to no import: regroup by hand", fset.Position(cg.Pos()).Line)
		}
	}
	var b bytes.Buffer
	b.WriteString("import (\n")
	first := true
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		if !first {
			b.WriteString("\n")
		}
		first = false
		slices.SortStableFunc(g, func(x, y entry) int {
			return strings.Compare(x.path+" "+x.name, y.path+" "+y.name)
		})
		for _, e := range g {
			b.WriteString("\t" + e.text + "\n")
		}
	}
	b.WriteString(")")
	return b.Bytes(), nil
}

// Walk calls fn for every .go file under root, leaving out the trees Go
// itself ignores (testdata, vendor, and names starting with . or _).
func Walk(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		return fn(path)
	})
}
