// Package migration reads a store's embedded schema history: files named
// migrations/NNNN_name.sql, numbered 1, 2, 3… without gaps so that a
// missing file cannot go unnoticed. SQLite and Postgres keep their own
// SQL, in step, but read it the same way.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string // file name, recorded for people reading the table
	Script  string
}

// MustLoad is Load for the embedded history: a malformed file is a build
// mistake the stores' tests catch, so it panics at init.
func MustLoad(fsys fs.FS) []Migration {
	m, err := Load(fsys)
	if err != nil {
		panic(err)
	}
	return m
}

// Load reads migrations/*.sql of fsys in version order.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("listing migrations: %w", err)
	}
	slices.Sort(names)
	out := make([]Migration, 0, len(names))
	for i, p := range names {
		name := path.Base(p)
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", name)
		}
		if v != i+1 {
			return nil, fmt.Errorf("migration %s: got version %d, want %d", name, v, i+1)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: name, Script: string(b)})
	}
	return out, nil
}
