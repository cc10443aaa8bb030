package builder

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// copySrc is where a COPY reads: uploaded files or an earlier stage.
type copySrc struct {
	key   string   // part of the cache key: the files' hash or the stage's key
	tar   string   // the uploaded gzip tar
	stage *fsState // COPY --from
}

func (b *Builder) copySource(team string, s wire.Step, stages map[string]*fsState) (*copySrc, error) {
	if s.FromStage != "" {
		st, ok := stages[s.FromStage]
		if !ok {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("COPY --from names stage %q, which is not built before it", s.FromStage))
		}
		return &copySrc{key: st.key, stage: st}, nil
	}
	p := b.filePath(TeamFiles(team, s.FilesHash))
	if _, err := os.Stat(p); err != nil {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("the files of COPY %s (hash %s) were not uploaded", s.Args[0], s.FilesHash))
	}
	return &copySrc{key: s.FilesHash, tar: p}, nil
}

// entry is one path of a COPY's source tree, relative to its root.
type entry struct {
	name  string
	isDir bool
}

// copyMapping maps source paths to in-image destinations with Docker's
// rules: a directory's contents go into dest; a file goes to dest, or into
// it when dest is a directory (ends in '/', exists as one, or several
// sources match).
type copyMapping struct {
	roots   map[string]bool // matched source roots -> is a directory
	dest    string          // in-image, symlinks resolved
	destDir bool
}

func newCopyMapping(src string, entries []entry, v *view, dest string) (*copyMapping, error) {
	src = cleanRel(src)
	isDir := map[string]bool{}
	for _, e := range entries {
		isDir[e.name] = isDir[e.name] || e.isDir
		for d := path.Dir(e.name); d != "."; d = path.Dir(d) {
			isDir[d] = true
		}
	}
	m := &copyMapping{roots: map[string]bool{}}
	glob := strings.ContainsAny(src, "*?[")
	switch {
	case src == ".":
		m.roots["."] = true
	case glob:
		for name, dir := range isDir {
			if ok, _ := path.Match(src, name); ok {
				m.roots[name] = dir
			}
		}
	default:
		if dir, ok := isDir[src]; ok {
			m.roots[src] = dir
		}
	}
	if len(m.roots) == 0 {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("no source files were specified: %q matches nothing", src))
	}
	real, err := v.resolve(dest)
	if err != nil {
		return nil, err
	}
	m.dest = real
	m.destDir = strings.HasSuffix(dest, "/") || glob || len(m.roots) > 1
	if fi, err := v.stat(real); err == nil && fi.IsDir() {
		m.destDir = true
	}
	return m, nil
}

// target is where name lands in the image ("" = skip it).
func (m *copyMapping) target(name string) string {
	name = cleanRel(name)
	for root, dir := range m.roots {
		switch {
		case dir && root == ".":
			if name == "." {
				return ""
			}
			return path.Join(m.dest, name)
		case dir && name == root:
			return "" // dest itself is made by mkdirs
		case dir && strings.HasPrefix(name, root+"/"):
			return path.Join(m.dest, strings.TrimPrefix(name, root+"/"))
		case !dir && name == root:
			if m.destDir {
				return path.Join(m.dest, path.Base(name))
			}
			return m.dest
		}
	}
	return ""
}

func cleanRel(name string) string {
	c := strings.TrimPrefix(path.Clean("/"+name), "/")
	if c == "" {
		return "."
	}
	return c
}

// copyStep writes a COPY's files into the layer dir.
func (b *Builder) copyStep(ctx context.Context, st *fsState, s wire.Step, src *copySrc, dir string) error {
	v, err := openView(b.opts.WorkDir, st.layers)
	if err != nil {
		return err
	}
	defer v.close()
	crashpoint.Hit("build.copy")
	owner := st.userOrRoot()
	if len(s.Args) > 2 && s.Args[2] != "" {
		owner = s.Args[2]
	}
	uid, gid, err := v.ids(owner)
	if err != nil {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("COPY owner: %v", err))
	}
	// A COPY can never hold more than the template's disk.
	opts := layer.Options{UID: &uid, GID: &gid, Limit: int64(b.opts.DefaultDiskMB) << 20}
	if len(s.Args) > 3 && s.Args[3] != "" {
		mode, err := strconv.ParseUint(s.Args[3], 8, 32)
		if err != nil || mode > 0o7777 {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("COPY mode %q is not an octal permission", s.Args[3]))
		}
		fm := os.FileMode(mode)
		opts.FileMode = &fm
	}
	dest := s.Args[1]
	if !path.IsAbs(dest) {
		dest = path.Join(st.workdirOrRoot(), dest) + map[bool]string{true: "/"}[strings.HasSuffix(dest, "/")]
	}
	open, entries, err := b.sourceTree(ctx, src, s.Args[0])
	if err != nil {
		return err
	}
	m, err := newCopyMapping(s.Args[0], entries, v, dest)
	if err != nil {
		return err
	}
	if m.destDir {
		err = mkdirs(v, dir, m.dest, uid, gid)
	} else {
		err = mkdirs(v, dir, path.Dir(m.dest), uid, gid)
	}
	if err != nil {
		return err
	}
	if s.Extract {
		return b.extractArchive(ctx, open, m, v, dir, opts)
	}
	opts.Map = placer(v, dir, m.target, uid, gid)
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	return layer.Extract(ctx, r, dir, opts)
}

// placer returns the Map of an extraction: it places entries by target and
// creates their parent directories first, resolving symlinks the image
// has (a file copied to /bin/x lands in /usr/bin/x where /bin -> usr/bin).
func placer(v *view, dir string, target func(string) string, uid, gid int) func(string) (string, bool) {
	made := map[string]string{}
	return func(name string) (string, bool) {
		t := target(name)
		if t == "" {
			return "", false
		}
		parent := path.Dir(t)
		real, ok := made[parent]
		if !ok {
			var err error
			if real, err = v.resolve(parent); err != nil {
				return "", false
			}
			if err := mkdirs(v, dir, real, uid, gid); err != nil {
				return "", false
			}
			made[parent] = real
		}
		return strings.TrimPrefix(path.Join(real, path.Base(t)), "/"), true
	}
}

// sourceTree lists a COPY's source entries and returns how to open them
// as an uncompressed tar stream.
func (b *Builder) sourceTree(ctx context.Context, src *copySrc, pattern string) (func() (io.ReadCloser, error), []entry, error) {
	if src.stage != nil {
		return stageTree(ctx, b.opts.WorkDir, src.stage, pattern)
	}
	open := func() (io.ReadCloser, error) { return openUpload(src.tar) }
	r, err := open()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var entries []entry
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("reading the uploaded files: %v", err))
		}
		entries = append(entries, entry{name: cleanRel(h.Name), isDir: h.Typeflag == tar.TypeDir})
	}
	return open, entries, nil
}

// openUpload opens an uploaded gzip tar as a plain tar stream.
func openUpload(p string) (io.ReadCloser, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("opening uploaded files: %w", err)
	}
	zr, err := layer.Expansion(f, func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) })
	if err != nil {
		f.Close()
		// The SDK can send plain tars (gzip: false).
		if f, err = os.Open(p); err != nil {
			return nil, err
		}
		return f, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, f}, nil
}

// filePath is where the upload of hash is kept.
// filesExt ends the name of every stored upload.
const filesExt = ".tar"

func (b *Builder) filePath(hash string) string {
	return filepath.Join(b.opts.FilesDir, hash+filesExt)
}
