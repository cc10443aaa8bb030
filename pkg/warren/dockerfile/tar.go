package dockerfile

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// WriteTar writes the gzip tar the SDK uploads for "COPY src": every path
// Files(src) lists, in that order, named relative to the context (the root
// as "./", directories with a trailing slash, as node-tar names them), not
// recursing on its own, and keeping symbolic links as links.
func (c *Context) WriteTar(w io.Writer, src string) error {
	entries, err := c.collect(src)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("no files found for %q in %s", src, c.dir)
	}
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := c.writeEntry(tw, e); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("writing tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("writing tar: %w", err)
	}
	return nil
}

func (c *Context) writeEntry(tw *tar.Writer, e entry) error {
	p := c.abs(e.rel)
	var link string
	if e.info.Mode()&fs.ModeSymlink != 0 {
		var err error
		if link, err = os.Readlink(p); err != nil {
			return fmt.Errorf("archiving %s: %w", e.rel, err)
		}
	}
	if e.info.Mode()&fs.ModeSocket != 0 {
		return nil // a socket has no content to carry; node-tar skips it too
	}
	hdr, err := tar.FileInfoHeader(e.info, link)
	if err != nil {
		return fmt.Errorf("archiving %s: %w", e.rel, err)
	}
	hdr.Name = e.rel
	switch {
	case e.rel == "":
		hdr.Name = "./"
	case e.info.IsDir():
		hdr.Name += "/"
	}
	// Names of the local owner mean nothing on the server; node-tar leaves
	// them out as well and keeps only the numeric ids.
	hdr.Uname, hdr.Gname = "", ""
	// tar stores whole seconds; node-tar truncates where Go would round.
	hdr.ModTime = hdr.ModTime.Truncate(time.Second)
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("archiving %s: %w", e.rel, err)
	}
	if !e.info.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("archiving %s: %w", e.rel, err)
	}
	defer f.Close()
	if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
		return fmt.Errorf("archiving %s: %w", e.rel, err)
	}
	return nil
}
