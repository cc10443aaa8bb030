package apiserver

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/template/image"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// maxImage bounds one image import upload; it is a variable for tests.
var maxImage int64 = 64 << 30

// importImage serves POST /images (warren): the body is a `docker save`
// tarball (gzipped or not) or an OCI image layout packed as a tar. Its
// images become available to the team's FROM and fromImage by their refs;
// other teams do not see them.
func (s *Server) importImage(w http.ResponseWriter, r *http.Request) {
	if s.opts.Images == nil {
		fail(w, r, errdefs.New(errdefs.ErrNotImplemented, "this server does not import images"))
		return
	}
	if r.ContentLength > maxImage {
		fail(w, r, imageTooLarge())
		return
	}
	dir, err := os.MkdirTemp(s.opts.ScratchDir, "import-")
	if err != nil {
		fail(w, r, fmt.Errorf("import scratch: %w", err))
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "image.tar")
	if err := saveBody(r.Body, path); err != nil {
		fail(w, r, err)
		return
	}
	target := path
	if isLayoutTar(path) {
		target = filepath.Join(dir, "layout")
		if err := unpackLayout(r, path, target); err != nil {
			fail(w, r, err)
			return
		}
	}
	refs, err := s.opts.Images.Import(r.Context(), teamOf(r), target, nil)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"refs": nonNil(refs)})
}

func saveBody(body io.Reader, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(body, maxImage+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, errNoSpace) {
			return errdefs.New(errdefs.ErrNoSpace, "the server's disk is full")
		}
		return errdefs.New(errdefs.ErrInvalidArgument, "reading the image upload: "+err.Error())
	}
	if n > maxImage {
		return imageTooLarge()
	}
	return nil
}

func imageTooLarge() error {
	return errdefs.New(errdefs.ErrTooLarge, fmt.Sprintf("the image is larger than %d bytes, the most an import takes", int64(maxImage)))
}

// isLayoutTar reports whether a tar holds an OCI layout (an oci-layout
// file at its top) rather than `docker save` output.
func isLayoutTar(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	tr := tar.NewReader(bufio.NewReader(f))
	for {
		h, err := tr.Next()
		if err != nil {
			return false
		}
		if n := filepath.Clean(h.Name); n == "oci-layout" {
			return true
		}
	}
}

func unpackLayout(r *http.Request, path, dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := layer.Extract(r.Context(), f, dir, layer.Options{}); err != nil {
		return fmt.Errorf("unpacking the OCI layout: %w", err)
	}
	return nil
}

// listImages serves GET /images (warren): the team's imported images
// (the admin's: every team's).
func (s *Server) listImages(w http.ResponseWriter, r *http.Request) {
	if s.opts.Images == nil {
		writeJSON(w, http.StatusOK, []rest.Image{})
		return
	}
	imgs, err := s.opts.Images.List()
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.Image, 0, len(imgs))
	for _, i := range imgs {
		if !owns(r, i.Team) {
			continue
		}
		out = append(out, rest.Image{Ref: i.Ref, Digest: i.Digest, Layers: len(i.Layers), SizeBytes: i.Size, ImportedAt: i.Imported})
	}
	writeJSON(w, http.StatusOK, out)
}

// Images imports images for a team and lists every team's (image.Puller).
type Images interface {
	Import(ctx context.Context, team, path string, progress func(string)) ([]string, error)
	List() ([]image.ImportedImage, error)
}

var errNoSpace = syscall.ENOSPC
