package dockerfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// glob adds to found the paths below the directory rel that match the
// pattern segments segs, with node-glob's rules for the cases a COPY source
// uses: "**" matches any number of directories but does not descend into
// symbolic links, other segments follow links.
func (c *Context) glob(rel string, segs []string, dirOnly bool, found map[string]entry) error {
	if len(segs) == 0 {
		return c.add(rel, dirOnly, found)
	}
	seg, rest := segs[0], segs[1:]
	switch {
	case seg == "**":
		return c.globStar(rel, segs, dirOnly, found)
	case !hasMagic(seg):
		child := join(rel, unescape(seg))
		if len(rest) > 0 && !c.isDir(child) {
			return nil
		}
		return c.glob(child, rest, dirOnly, found)
	}
	names, err := c.readDir(rel)
	if err != nil {
		return err
	}
	for _, name := range names {
		// The pattern was checked by hasMagic, so Match cannot fail.
		if ok, _ := path.Match(seg, name); !ok {
			continue
		}
		child := join(rel, name)
		if len(rest) > 0 && !c.isDir(child) {
			continue
		}
		if err := c.glob(child, rest, dirOnly, found); err != nil {
			return err
		}
	}
	return nil
}

// globStar handles a "**" segment: it matches nothing (try the rest here)
// or one more real directory (try "**" again inside it).
func (c *Context) globStar(rel string, segs []string, dirOnly bool, found map[string]entry) error {
	rest := segs[1:]
	if err := c.glob(rel, rest, dirOnly, found); err != nil {
		return err
	}
	names, err := c.readDir(rel)
	if err != nil {
		return err
	}
	for _, name := range names {
		child := join(rel, name)
		fi, err := os.Lstat(c.abs(child))
		if err != nil {
			return fmt.Errorf("listing %s: %w", child, err)
		}
		switch {
		case fi.IsDir():
			err = c.glob(child, segs, dirOnly, found)
		case len(rest) == 0:
			err = c.add(child, dirOnly, found)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// add records rel if it exists (and is a directory when the pattern ended
// in a slash).
func (c *Context) add(rel string, dirOnly bool, found map[string]entry) error {
	fi, err := os.Lstat(c.abs(rel))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", rel, err)
	}
	if dirOnly && !c.isDir(rel) {
		return nil
	}
	found[rel] = entry{rel: rel, info: fi}
	return nil
}

// readDir lists the names in rel (following a link), or nothing when rel is
// not a directory.
func (c *Context) readDir(rel string) ([]string, error) {
	if !c.isDir(rel) {
		return nil, nil
	}
	f, err := os.Open(c.abs(rel))
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", rel, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", rel, err)
	}
	return names, nil
}

func (c *Context) isDir(rel string) bool {
	fi, err := os.Stat(c.abs(rel))
	return err == nil && fi.IsDir()
}

// splitPattern cuts a glob into path segments. "./" and "a/.." are cleaned
// away as node-glob resolves them; a trailing slash means only directories
// match.
func splitPattern(pat string) (segs []string, dirOnly bool) {
	dirOnly = strings.HasSuffix(pat, "/")
	for _, s := range strings.Split(path.Clean(pat), "/") {
		if s == "" || s == "." {
			continue
		}
		if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue
		}
		segs = append(segs, s)
	}
	return segs, dirOnly
}

// hasMagic reports whether seg is a pattern rather than a name. A bracket
// that never closes is literal, as in minimatch.
func hasMagic(seg string) bool {
	if !strings.ContainsAny(seg, "*?[") {
		return false
	}
	_, err := path.Match(seg, "")
	return err == nil
}

// unescape removes the backslashes that quote characters in a name.
func unescape(seg string) string {
	if !strings.Contains(seg, `\`) {
		return seg
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		if seg[i] == '\\' && i+1 < len(seg) {
			i++
		}
		b.WriteByte(seg[i])
	}
	return b.String()
}

func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// maxAlternatives bounds what one COPY source's braces expand to: each
// group multiplies the count, so "{a,b}" thirty times would otherwise be a
// billion patterns.
const maxAlternatives = 1024

// expandBraces expands "{a,b}" alternatives (nested too), as minimatch does
// before matching. Numeric ranges like {1..3} are not supported.
func expandBraces(pat string) ([]string, error) {
	var out []string
	if err := expandInto(pat, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func expandInto(pat string, out *[]string) error {
	open, close, commas := findBraces(pat)
	if open < 0 {
		if len(*out) == maxAlternatives {
			return fmt.Errorf("invalid source path: its {...} alternatives expand to more than %d patterns", maxAlternatives)
		}
		*out = append(*out, pat)
		return nil
	}
	prefix, suffix := pat[:open], pat[close+1:]
	start := open + 1
	for _, comma := range append(commas, close) {
		if err := expandInto(prefix+pat[start:comma]+suffix, out); err != nil {
			return err
		}
		start = comma + 1
	}
	return nil
}

// findBraces locates the first "{...}" group that has a top-level comma,
// returning the positions of its braces and commas, or -1.
func findBraces(pat string) (open, close int, commas []int) {
	for i := 0; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case '{':
			if end, cs := matchBrace(pat, i); end > 0 && len(cs) > 0 {
				return i, end, cs
			}
		}
	}
	return -1, -1, nil
}

func matchBrace(pat string, open int) (end int, commas []int) {
	depth := 0
	for i := open; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, commas
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	return -1, nil
}
