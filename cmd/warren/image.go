package main

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// imageCommand is `warren image import|list`, a client of the server's
// /images endpoints.
func imageCommand(conn *connFlags) *cobra.Command {
	imp := &cobra.Command{
		Use:   "import FILE|DIR",
		Short: "import a docker save tarball or an OCI image layout",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: withClient(conn, func(_ context.Context, c *warren.Client, args []string) error {
			return imageImport(c, args[0])
		}),
	}
	list := &cobra.Command{
		Use: "list", Short: "list the imported images", Args: usageArgs(cobra.NoArgs),
		RunE: withClient(conn, func(_ context.Context, c *warren.Client, _ []string) error { return imageList(c) }),
	}
	cmd := parentCommand("image", "import docker-save tarballs and OCI layouts for builds", "server", imp, list)
	cmd.Long = "Imported images are used by FROM and fromImage by their names, before any\nregistry is asked.\n\n" + serverFound
	conn.register(cmd.PersistentFlags())
	return cmd
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
