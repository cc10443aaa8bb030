package dockerfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// Context is a build context directory: the files COPY and ADD read, minus
// what its .dockerignore excludes.
//
// Which files a COPY source selects follows the E2B SDK's getAllFilesInPath,
// so that Hash gives the same cache key the SDK would for the same files:
// the source is a glob (node-glob syntax: *, ?, [...], ** and {a,b}, dot
// files included), every matched directory brings along everything below it,
// symbolic links are kept as links and never descended into, and the result
// is sorted. The .dockerignore, however, is applied with Docker's rules
// (moby/patternmatcher): a pattern that names a directory excludes all of
// it, and "!" re-includes. The SDK hands the same patterns to node-glob's
// ignore option, where "node_modules" hides only the directory entry and not
// its contents; a Dockerfile author means Docker's reading, and sending an
// ignored node_modules would be both slow and surprising.
type Context struct {
	dir    string
	ignore *patternmatcher.PatternMatcher

	// remote holds files ADD downloaded (see Download), named in the
	// context under remotePrefix; "" until the first download.
	remote    string
	downloads int
}

// entry is one path selected by a COPY source.
type entry struct {
	rel  string // slash-separated, relative to the context; "" is the root
	info fs.FileInfo
}

// NewContext opens dir as a build context and reads its .dockerignore.
func NewContext(dir string) (*Context, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("build context %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("build context: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("build context %s is not a directory", dir)
	}
	c := &Context{dir: abs}
	f, err := os.Open(filepath.Join(abs, ".dockerignore"))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading .dockerignore: %w", err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading .dockerignore: %w", err)
	}
	if len(patterns) > 0 {
		if c.ignore, err = patternmatcher.New(patterns); err != nil {
			return nil, fmt.Errorf("parsing .dockerignore: %w", err)
		}
	}
	return c, nil
}

// Dir is the context's absolute path.
func (c *Context) Dir() string { return c.dir }

// Files lists what src selects, as paths relative to the context ("." for
// the context directory itself), sorted.
func (c *Context) Files(src string) ([]string, error) {
	entries, err := c.collect(src)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.rel
		if e.rel == "" {
			out[i] = "."
		}
	}
	return out, nil
}

// validateSource rejects sources the SDK rejects: absolute paths and paths
// that climb out of the context.
func validateSource(src string) error {
	if path.IsAbs(src) || filepath.IsAbs(src) {
		return fmt.Errorf("invalid source path %q: absolute paths are not allowed, use a path relative to the build context", src)
	}
	clean := path.Clean(filepath.ToSlash(src))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("invalid source path %q: it escapes the build context", src)
	}
	return nil
}

// collect is getAllFilesInPath: the glob's matches, each matched directory
// expanded recursively, without ignored paths, sorted by path.
func (c *Context) collect(src string) ([]entry, error) {
	matches, err := c.match(src)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]entry)
	for _, m := range matches {
		seen[m.rel] = m
		if m.info.IsDir() {
			if err := c.walk(m.rel, seen); err != nil {
				return nil, err
			}
		}
	}
	out := make([]entry, 0, len(seen))
	for _, e := range seen {
		out = append(out, e)
	}
	// Byte order of the relative path is the SDK's order of full paths: they
	// share the context prefix, and the root ("") sorts first in both.
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, nil
}

// match returns the paths the glob src selects, before directories are
// expanded, without ignored ones.
func (c *Context) match(src string) ([]entry, error) {
	if err := validateSource(src); err != nil {
		return nil, err
	}
	pats, err := expandBraces(filepath.ToSlash(src))
	if err != nil {
		return nil, err
	}
	found := make(map[string]entry)
	for _, pat := range pats {
		// "{..,x}/f" passes the check above and only climbs out once
		// expanded, so each alternative is checked again.
		if err := validateSource(pat); err != nil {
			return nil, fmt.Errorf("%w (an alternative of %q)", err, src)
		}
		segs, dirOnly := splitPattern(pat)
		if err := c.glob("", segs, dirOnly, found); err != nil {
			return nil, err
		}
	}
	var out []entry
	for _, e := range found {
		if !c.ignored(e.rel) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, nil
}

// walk adds everything below the directory rel, like the SDK's second glob
// "rel/**/*": symbolic links to directories are listed, not followed.
func (c *Context) walk(rel string, seen map[string]entry) error {
	root := c.abs(rel)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("listing %s: %w", p, err)
		}
		if p == root {
			return nil
		}
		r, err := filepath.Rel(c.dir, p)
		if err != nil {
			return fmt.Errorf("listing %s: %w", p, err)
		}
		r = filepath.ToSlash(r)
		if c.ignored(r) {
			if d.IsDir() && !c.ignore.Exclusions() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("listing %s: %w", p, err)
		}
		seen[r] = entry{rel: r, info: info}
		return nil
	})
}

// ignored reports whether .dockerignore excludes rel; the root never is.
func (c *Context) ignored(rel string) bool {
	if c.ignore == nil || rel == "" || strings.HasPrefix(rel, remotePrefix+"/") {
		return false
	}
	// A malformed pattern was rejected by patternmatcher.New, so an error
	// here cannot happen; treat it as "not ignored" rather than fail.
	ok, _ := c.ignore.MatchesOrParentMatches(rel)
	return ok
}

func (c *Context) abs(rel string) string {
	if rel == "" {
		return c.dir
	}
	if c.remote != "" && (rel == remotePrefix || strings.HasPrefix(rel, remotePrefix+"/")) {
		return filepath.Join(c.remote, filepath.FromSlash(rel))
	}
	return filepath.Join(c.dir, filepath.FromSlash(rel))
}
