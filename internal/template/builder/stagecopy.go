package builder

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// stageTree serves COPY --from: the matched paths of an earlier stage's
// image, streamed as a tar with in-image names. The stage's view stays
// mounted until the stream is closed.
func stageTree(ctx context.Context, scratch string, st *fsState, pattern string) (func() (io.ReadCloser, error), []entry, error) {
	v, err := openView(scratch, st.layers)
	if err != nil {
		return nil, nil, err
	}
	defer v.close()
	roots, err := stageRoots(v, pattern)
	if err != nil {
		return nil, nil, err
	}
	var entries []entry
	for _, r := range roots {
		err := filepath.WalkDir(filepath.Join(v.root, r), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			entries = append(entries, entry{name: inImage(v, p), isDir: d.IsDir()})
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("listing %s of the stage: %w", r, err)
		}
	}
	open := func() (io.ReadCloser, error) {
		v, err := openView(scratch, st.layers)
		if err != nil {
			return nil, err
		}
		pr, pw := io.Pipe()
		go func() {
			defer v.close()
			pw.CloseWithError(writeTree(ctx, pw, v, roots))
		}()
		return pr, nil
	}
	return open, entries, nil
}

func inImage(v *view, p string) string {
	return cleanRel(strings.TrimPrefix(p, v.root))
}

// stageRoots resolves a COPY --from source (a glob only in its last part)
// to in-image paths with symlinks resolved inside the stage.
func stageRoots(v *view, pattern string) ([]string, error) {
	pattern = path.Clean("/" + pattern)
	dir, last := path.Split(pattern)
	if !strings.ContainsAny(last, "*?[") {
		real, err := v.resolveExisting(strings.TrimPrefix(pattern, "/"))
		if err != nil {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("%s does not exist in the stage", pattern))
		}
		return []string{cleanRel(real)}, nil
	}
	realDir, err := v.resolveExisting(strings.TrimPrefix(path.Clean(dir), "/"))
	if err != nil {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("%s does not exist in the stage", dir))
	}
	names, err := os.ReadDir(filepath.Join(v.root, realDir))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if ok, _ := path.Match(last, n.Name()); ok {
			out = append(out, cleanRel(path.Join(realDir, n.Name())))
		}
	}
	if len(out) == 0 {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("%s matches nothing in the stage", pattern))
	}
	return out, nil
}

// writeTree writes roots (and everything below them) of the view as a tar
// stream, never following symlinks.
func writeTree(ctx context.Context, w io.Writer, v *view, roots []string) error {
	tw := tar.NewWriter(w)
	for _, r := range roots {
		err := filepath.WalkDir(filepath.Join(v.root, r), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			return writeEntry(tw, v, p)
		})
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, v *view, p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	link := ""
	if fi.Mode()&os.ModeSymlink != 0 {
		if link, err = os.Readlink(p); err != nil {
			return err
		}
	}
	h, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return nil // sockets and the like are not copied
	}
	h.Name = inImage(v, p)
	h.Uname, h.Gname = "", ""
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(tw, f)
	return err
}

// extractArchive serves ADD of a local tarball: the single uploaded file
// is an archive whose contents are unpacked into dest.
func (b *Builder) extractArchive(ctx context.Context, open func() (io.ReadCloser, error), m *copyMapping, v *view, dir string, opts layer.Options) error {
	if len(m.roots) != 1 {
		return errdefs.New(errdefs.ErrInvalidArgument, "ADD unpacks one archive at a time")
	}
	var root string
	for r, isDir := range m.roots {
		if isDir {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("ADD: %s is a directory, not an archive", r))
		}
		root = r
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("ADD: %s is missing from the uploaded files", root))
		}
		if err != nil {
			return err
		}
		if cleanRel(h.Name) != root {
			continue
		}
		inner, err := decompress(tr)
		if err != nil {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("ADD %s: %v", root, err))
		}
		base := m.dest
		uid, gid := *opts.UID, *opts.GID
		if err := mkdirs(v, dir, base, uid, gid); err != nil {
			return err
		}
		opts.Map = placer(v, dir, func(name string) string {
			if cleanRel(name) == "." {
				return ""
			}
			return path.Join(base, cleanRel(name))
		}, uid, gid)
		// An archive's own owners and modes are kept, as docker does.
		opts.UID, opts.GID, opts.FileMode = nil, nil, nil
		return layer.Extract(ctx, inner, dir, opts)
	}
}

// decompress sniffs an archive's compression: gzip, bzip2 or none.
func decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(6)
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return gzip.NewReader(br)
	case bytes.HasPrefix(head, []byte("BZh")):
		return bzip2.NewReader(br), nil
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return nil, errors.New("xz archives are not supported; use gzip or bzip2")
	}
	return br, nil
}
