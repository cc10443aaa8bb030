package main

import (
	"archive/tar"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

const imageUsage = `usage: warren image import FILE|DIR    a docker save tarball or an OCI image layout
       warren image list

Imported images are used by FROM and fromImage by their names, before any
registry is asked.`

// runImage dispatches `warren image ...`, a client of the server's
// /images endpoints.
func runImage(args []string) error {
	if len(args) == 0 || (args[0] != "import" && args[0] != "list") {
		return errors.New(imageUsage)
	}
	fset := flag.NewFlagSet("image "+args[0], flag.ContinueOnError)
	url, key := serverFlags(fset)
	rest, err := parseInterleaved(fset, args[1:])
	if err != nil {
		return err
	}
	c, err := client(*url, *key)
	if err != nil {
		return err
	}
	if args[0] == "list" {
		return imageList(c)
	}
	if len(rest) != 1 {
		return errors.New(imageUsage)
	}
	return imageImport(c, rest[0])
}

func imageImport(c *warren.Client, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	var body io.Reader
	size := int64(-1) // an OCI layout's tar is made as it goes up
	if fi.IsDir() {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(tarDir(pw, path)) }()
		body = pr
	} else {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		body, size = f, fi.Size()
	}
	bar := progress(size, "import "+filepath.Base(path))
	refs, err := c.ImportImage(context.Background(), io.TeeReader(body, bar))
	_ = bar.Finish()
	if err != nil {
		return err
	}
	for _, r := range refs {
		fmt.Println("imported", r)
	}
	return nil
}

func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Name = filepath.ToSlash(rel)
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
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func imageList(c *warren.Client) error {
	imgs, err := c.ListImages(context.Background())
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "REF\tDIGEST\tLAYERS\tSIZE\tIMPORTED")
	for _, i := range imgs {
		d := i.Digest
		if len(d) > 19 {
			d = d[:19]
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%.1f MiB\t%s\n", i.Ref, d, i.Layers, float64(i.SizeBytes)/(1<<20), i.ImportedAt.Format(time.DateTime))
	}
	return w.Flush()
}
