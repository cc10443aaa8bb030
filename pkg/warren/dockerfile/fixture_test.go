package dockerfile

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// fsEntry describes one path of a test context: a file with content and
// mode, a directory (Dir), or a symbolic link (Link).
type fsEntry struct {
	Content string
	Mode    os.FileMode
	Dir     bool
	Link    string
}

// writeTree creates the entries under a new temporary directory.
func writeTree(t *testing.T, tree map[string]fsEntry) string {
	t.Helper()
	dir := t.TempDir()
	writeTreeAt(t, dir, tree)
	return dir
}

// writeTreeAt creates the entries under dir.
func writeTreeAt(t testing.TB, dir string, tree map[string]fsEntry) {
	t.Helper()
	for rel, e := range tree {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case e.Dir:
			err = os.MkdirAll(p, 0o755)
		case e.Link != "":
			err = os.Symlink(e.Link, p)
		default:
			mode := e.Mode
			if mode == 0 {
				mode = 0o644
			}
			if err = os.WriteFile(p, []byte(e.Content), mode); err == nil {
				err = os.Chmod(p, mode) // umask must not change what is hashed
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// sampleTree is a context with what makes listing and hashing tricky:
// dot files, links (to a directory, to a file, dangling), modes, empty
// directories, names that sort differently by path and by segment, and
// .dockerignore patterns that Docker and the SDK read the same way.
func sampleTree() map[string]fsEntry {
	return map[string]fsEntry{
		"a.txt":                {Content: "alpha\n"},
		"exec.sh":              {Content: "#!/bin/sh\necho hi\n", Mode: 0o755},
		".hidden":              {Content: "dot"},
		"my file.txt":          {Content: "spaces"},
		"ü.txt":                {Content: "unicode"},
		"a-b/c.txt":            {Content: "dash"},
		"a/b.txt":              {Content: "slash"},
		"empty":                {Dir: true},
		"src/main.go":          {Content: "package main\n"},
		"src/sub/deep.txt":     {Content: "deep"},
		"src/sub/.env":         {Content: "SECRET=1"},
		"src/x.log":            {Content: "kept: *.log is for the root only"},
		"src/cache.tmp":        {Content: "ignored by **/*.tmp"},
		"root.log":             {Content: "ignored"},
		"secret/key":           {Content: "ignored with its directory"},
		"secret/nested/k2":     {Content: "ignored"},
		"link":                 {Link: "src"},
		"flink":                {Link: "a.txt"},
		"dangling":             {Link: "does-not-exist"},
		"tools/bin/run":        {Content: "run", Mode: 0o700},
		"tools/readonly.txt":   {Content: "ro", Mode: 0o444},
		".dockerignore":        {Content: "# comment\n*.log\n**/*.tmp\nsecret\nsecret/**\n"},
		"src/sub/more/z.json":  {Content: "{}"},
		"src/sub/more/a.json":  {Content: "[]"},
		"src/{braces}.txt":     {Content: "literal braces"},
		"weird/[brackets].txt": {Content: "brackets"},
	}
}

// tarOf builds a tar archive of name/content pairs.
func tarOf(pairs ...string) string {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i+1 < len(pairs); i += 2 {
		tw.WriteHeader(&tar.Header{Name: pairs[i], Mode: 0o644, Size: int64(len(pairs[i+1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(pairs[i+1]))
	}
	tw.Close()
	return buf.String()
}

func gzipOf(s string) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	zw.Close()
	return buf.String()
}

// bzip2Tar is a bzip2-compressed tar holding hello.txt; Go can read bzip2
// but not write it.
var bzip2Tar = mustHex("425a6839314159265359fb0b6cd400006efb80c9900000c0015d80008062649e40080820005434a3132313131306824a6a68d0d1a0068c95f71190820f421119caf251c20810e0ed89e8f158e11c310f9022d44d4ae04ad33e6f818d19e8dae2220362ee48a70a121f616d9a80")

func mustHex(s string) string {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
