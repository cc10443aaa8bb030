package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
)

var errNotVolumePath = errors.New("cp copies between here and a volume: exactly one side must be VOLUME:/path")

func volumeCat(conn *connFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "cat VOLUME:/path",
		Short: "print a file of a volume",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: withClient(conn, func(ctx context.Context, c *warren.Client, args []string) error {
			v, p, err := volumePath(ctx, c, args[0])
			if err != nil {
				return err
			}
			r, err := v.OpenFile(ctx, p)
			if err != nil {
				return err
			}
			defer r.Close()
			_, err = io.Copy(os.Stdout, r)
			return err
		}),
	}
}

func volumeCopy(conn *connFlags) *cobra.Command {
	var noClobber bool
	var mode string
	cmd := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "copy a file into or out of a volume: VOLUME:/path names the volume's side (by name or id), - is stdin or stdout",
		Example: "  warren volume cp data.csv models:/data/data.csv\n" +
			"  warren volume cp models:/out.bin .\n" +
			"  echo hi | warren volume cp - models:/hello.txt",
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: withClient(conn, func(ctx context.Context, c *warren.Client, args []string) error {
			src, _ := splitRemote(args[0])
			dst, _ := splitRemote(args[1])
			if (src == "") == (dst == "") {
				return errNotVolumePath
			}
			if src != "" {
				return volumeDownload(ctx, c, args[0], args[1])
			}
			o, err := writeOptions(mode, !noClobber)
			if err != nil {
				return err
			}
			return volumeUpload(ctx, c, args[0], args[1], o)
		}),
	}
	cmd.Flags().BoolVarP(&noClobber, "no-clobber", "n", false, "refuse to replace an existing file in the volume")
	cmd.Flags().StringVar(&mode, "mode", "", "permission bits of the file written, octal (default 0644)")
	return cmd
}

// volumeUpload writes the local file (- = stdin) to VOLUME:/path; a path
// ending in / (or none) takes the local file's name.
func volumeUpload(ctx context.Context, c *warren.Client, local, remote string, o warren.VolumeWriteOptions) error {
	name, p := splitRemote(remote)
	if p == "" {
		p = "/"
	}
	src, err := openSource(local)
	if err != nil {
		return err
	}
	defer src.Close()
	if p, err = src.target(p); err != nil {
		return fmt.Errorf("%s: %w", remote, err)
	}
	v, err := openVolume(ctx, c, name)
	if err != nil {
		return err
	}
	return src.send(p, func(r io.Reader) (string, error) {
		e, err := v.WriteFile(ctx, p, r, o)
		return e.Path, err
	})
}

// volumeDownload copies VOLUME:/path to the local file, into the local
// directory, or to stdout (-).
func volumeDownload(ctx context.Context, c *warren.Client, remote, local string) error {
	v, p, err := volumePath(ctx, c, remote)
	if err != nil {
		return err
	}
	st, err := v.Stat(ctx, p)
	if err != nil {
		return err
	}
	if st.Type == warren.VolumeDirectory {
		return fmt.Errorf("%s is a directory: cp copies single files", remote)
	}
	r, err := v.OpenFile(ctx, p)
	if err != nil {
		return err
	}
	defer r.Close()
	return receive(local, st.Name, st.Path, st.Size, func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	})
}
