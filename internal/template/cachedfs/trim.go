package cachedfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// trimRules say what to delete from the finished tree: the children of dir
// for which keep returns false. Package lists and .debs are re-fetched by
// `apt-get update`; logs describe the build, not the sandbox; docs, man
// pages and translations are unread in a sandbox (there is no man-db) and
// dpkgExcludes keeps them out of later installs too. About 150 MB in all.
var trimRules = []struct {
	dir  string
	keep func(name string) bool
}{
	{"var/lib/apt/lists", keepNames("partial", "lock")},
	{"var/cache/apt/archives", keepNames("partial", "lock")},
	{"var/cache/apt", keepNames("archives")},
	{"var/lib/apt/lists/partial", nil},
	{"var/cache/apt/archives/partial", nil},
	{"var/log", nil},
	{"var/cache/debconf", func(n string) bool { return !strings.HasSuffix(n, "-old") }},
	{"var/lib/dpkg", func(n string) bool { return !strings.HasSuffix(n, "-old") }},
	{"usr/share/man", nil},
	{"usr/share/info", nil},
	{"usr/share/lintian", nil},
	{"usr/share/locale", keepNames("locale.alias")},
}

func keepNames(names ...string) func(string) bool {
	return func(n string) bool {
		for _, k := range names {
			if n == k {
				return true
			}
		}
		return false
	}
}

// Trim deletes what trimRules name, and all of /usr/share/doc but the
// copyright files (which the licenses ask us to ship with the binaries).
func Trim(rootfs string) error {
	r, err := os.OpenRoot(rootfs)
	if err != nil {
		return fmt.Errorf("opening rootfs: %w", err)
	}
	defer r.Close()
	for _, rule := range trimRules {
		if err := removeChildren(r, rule.dir, rule.keep); err != nil {
			return err
		}
	}
	return trimDocs(r)
}

// removeChildren deletes each entry of dir that keep rejects (all of them
// when keep is nil). A missing dir is fine. Logs are kept as directories
// (var/log/apt) because packages expect those to exist.
func removeChildren(r *os.Root, dir string, keep func(string) bool) error {
	entries, err := fs.ReadDir(r.FS(), dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing /%s: %w", dir, err)
	}
	for _, e := range entries {
		if keep != nil && keep(e.Name()) {
			continue
		}
		p := path.Join(dir, e.Name())
		if dir == "var/log" && e.IsDir() {
			if err := removeChildren(r, p, nil); err != nil {
				return err
			}
			continue
		}
		if err := r.RemoveAll(p); err != nil {
			return fmt.Errorf("removing /%s: %w", p, err)
		}
	}
	return nil
}

// trimDocs empties each /usr/share/doc/<pkg> except its copyright file.
// Entries that are symlinks (doc dirs shared between packages) stay.
func trimDocs(r *os.Root) error {
	const doc = "usr/share/doc"
	entries, err := fs.ReadDir(r.FS(), doc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing /%s: %w", doc, err)
	}
	for _, e := range entries {
		p := path.Join(doc, e.Name())
		if !e.IsDir() {
			if e.Type().IsRegular() {
				if err := r.Remove(p); err != nil {
					return fmt.Errorf("removing /%s: %w", p, err)
				}
			}
			continue
		}
		if err := removeChildren(r, p, keepNames("copyright")); err != nil {
			return err
		}
	}
	return nil
}
