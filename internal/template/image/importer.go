package image

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// Annotations naming an image in an OCI layout's index.json. containerd
// (and docker save since v25) put the full name in its own annotation and
// only the tag in the OCI one, so the full name wins when present.
const (
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

// namedImage is one image found in an archive, before extraction.
type namedImage struct {
	ref, digest string
	img         v1.Image
}

// Import reads a `docker save` tarball (optionally gzipped) or an OCI image
// layout directory at path, extracts the layers of the images in it and
// records them as team's, so that Resolve serves their refs to team
// without a registry.
//
// Tarball images are named by their RepoTags and layout images by their
// name annotation; an image with no name gets its digest ("sha256:…") as
// ref. It returns the refs imported, in the form Resolve and List use.
func (p *Puller) Import(ctx context.Context, team, path string, progress func(string)) ([]string, error) {
	if progress == nil {
		progress = func(string) {}
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("image archive %s not found", path))
	}
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	var imgs []namedImage
	if st.IsDir() {
		imgs, err = readLayout(path, progress)
	} else {
		plain, cleanup, gzErr := p.gunzip(path)
		if gzErr != nil {
			return nil, gzErr
		}
		defer cleanup()
		imgs, err = readTarball(plain, path, progress)
	}
	if err != nil {
		return nil, err
	}
	if len(imgs) == 0 {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("%s holds no image to import", path))
	}
	var recs []ImportedImage
	var refs []string
	for i, ni := range imgs {
		progress(fmt.Sprintf("importing %s (%d/%d)", ni.ref, i+1, len(imgs)))
		rec, err := p.importImage(ctx, ni, progress)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", ni.ref, err)
		}
		rec.Team = store.TeamOf(team)
		recs = append(recs, rec)
		refs = append(refs, rec.Ref)
	}
	if err := p.record(recs); err != nil {
		return nil, err
	}
	return refs, nil
}

func (p *Puller) importImage(ctx context.Context, ni namedImage, progress func(string)) (ImportedImage, error) {
	cfg, err := ni.img.ConfigFile()
	if err != nil {
		return ImportedImage{}, badArchive(err)
	}
	layers, err := ni.img.Layers()
	if err != nil {
		return ImportedImage{}, badArchive(err)
	}
	keys, err := p.unpack(ctx, layers, progress, unpackOptions{verb: "importing", jobs: 1})
	if err != nil {
		return ImportedImage{}, layerErr(ctx, err)
	}
	var size int64
	for _, k := range keys {
		if s, err := p.layers.Size(k); err == nil {
			size += s
		}
	}
	return ImportedImage{
		Ref:      ni.ref,
		Digest:   ni.digest,
		Layers:   keys,
		Config:   convertConfig(cfg),
		Size:     size,
		Imported: time.Now().UTC(),
	}, nil
}

// badArchive classifies a failure to read an image out of the user's
// archive: a missing blob, bad JSON, a bad digest are all the archive's
// fault. Only the host's own I/O errors (other than a missing file) keep
// their meaning.
func badArchive(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if errdefs.IsInvalidArgument(err) {
		return err
	}
	return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("broken image archive: %v", err))
}

// layerErr classifies a failure to unpack an imported layer. Unlike a
// pull, nothing between the archive and us can fail by chance: a layer that
// does not decompress or ends early (flate or gzip errors, a short read) is
// a broken archive, the user's to fix. A cancel, a full disk and the host's
// own filesystem errors keep their meaning.
func layerErr(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, errdefs.ErrNoSpace) {
		return err
	}
	return badArchive(err)
}

// readTarball lists the images of the docker save tarball plain (path is
// what the user named, for messages).
func readTarball(plain, path string, progress func(string)) ([]namedImage, error) {
	opener := func() (io.ReadCloser, error) { return os.Open(plain) }
	m, err := tarball.LoadManifest(opener)
	if err != nil {
		return nil, errdefs.New(errdefs.ErrInvalidArgument,
			fmt.Sprintf("%s is neither a docker save tarball nor an OCI layout directory: %v", path, err))
	}
	var imgs []namedImage
	for _, d := range m {
		if len(d.RepoTags) == 0 && len(m) > 1 {
			progress(fmt.Sprintf("skipping untagged image %s", d.Config))
			continue
		}
		found, err := tarballImages(opener, d)
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, found...)
	}
	return imgs, nil
}

// tarballImages returns one namedImage per tag of d; an untagged image (only
// possible alone in its tarball) is named by its config digest, which is
// what docker calls the image ID.
func tarballImages(opener tarball.Opener, d tarball.Descriptor) ([]namedImage, error) {
	if len(d.RepoTags) == 0 {
		img, err := tarball.Image(opener, nil)
		if err != nil {
			return nil, badArchive(err)
		}
		id, err := img.ConfigName()
		if err != nil {
			return nil, badArchive(err)
		}
		return []namedImage{{ref: id.String(), digest: id.String(), img: img}}, nil
	}
	var out []namedImage
	for _, t := range d.RepoTags {
		tag, err := name.NewTag(t)
		if err != nil {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("invalid tag %q in the tarball: %v", t, err))
		}
		img, err := tarball.Image(opener, &tag)
		if err != nil {
			return nil, badArchive(err)
		}
		id, err := img.ConfigName()
		if err != nil {
			return nil, badArchive(err)
		}
		out = append(out, namedImage{ref: tag.Name(), digest: id.String(), img: img})
	}
	return out, nil
}

// gunzip returns path itself for a plain file, or a scratch copy of its
// decompressed content for a gzipped one (cleanup removes it).
// go-containerregistry re-reads a tarball for every file it needs, which
// is cheap on a plain file (tar skips by seeking) but would decompress a
// gzipped one again and again.
func (p *Puller) gunzip(path string) (string, func(), error) {
	noop := func() {}
	f, err := os.Open(path)
	if err != nil {
		return "", noop, fmt.Errorf("import %s: %w", path, err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return path, noop, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return "", noop, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("%s: %v", path, err))
	}
	tmp, err := os.CreateTemp(p.root, ".tmp-import-*.tar")
	if err != nil {
		return "", noop, fmt.Errorf("import %s: %w", path, err)
	}
	cleanup := func() { os.Remove(tmp.Name()) }
	_, err = io.Copy(tmp, zr)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", noop, scratchErr(path, err)
	}
	return tmp.Name(), cleanup, nil
}

// readLayout lists the images of an OCI image layout directory.
func readLayout(dir string, progress func(string)) ([]namedImage, error) {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, errdefs.New(errdefs.ErrInvalidArgument,
			fmt.Sprintf("%s is neither an OCI layout directory (no index.json) nor a docker save tarball", dir))
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return nil, badArchive(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, badArchive(err)
	}
	var out []namedImage
	for _, d := range im.Manifests {
		ref, err := layoutRef(d)
		if err != nil {
			return nil, err
		}
		var img v1.Image
		switch {
		case d.MediaType.IsImage():
			img, err = idx.Image(d.Digest)
		case d.MediaType.IsIndex():
			var child v1.ImageIndex
			if child, err = idx.ImageIndex(d.Digest); err == nil {
				img, err = pickPlatform(child, ref)
			}
		default:
			progress(fmt.Sprintf("skipping %s: %s is not an image", d.Digest, d.MediaType))
			continue
		}
		if err != nil {
			return nil, badArchive(err)
		}
		out = append(out, namedImage{ref: ref, digest: d.Digest.String(), img: img})
	}
	return out, nil
}

func layoutRef(d v1.Descriptor) (string, error) {
	n := d.Annotations[annotationContainerdName]
	if n == "" {
		n = d.Annotations[annotationRefName]
	}
	if n == "" {
		return d.Digest.String(), nil
	}
	r, err := name.ParseReference(n)
	if err != nil {
		return "", errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("image name %q in the layout: %v", n, err))
	}
	return r.Name(), nil
}

func scratchErr(path string, err error) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("decompress %s: %w: %w", path, errdefs.ErrNoSpace, err)
	case errors.As(err, &errno):
		return fmt.Errorf("decompress %s: %w", path, err) // the host's scratch file failed
	}
	// Anything else came from reading the archive: a corrupt or cut gzip
	// stream (checksum, header, flate errors, an early end).
	return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("decompress %s: %v", path, err))
}
