package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/warren-sandbox/warren/pkg/warren"
)

func sandboxCopy(conn *connFlags) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "copy a file into or out of a sandbox: ID:PATH names the sandbox's side, - is stdin or stdout",
		Example: "  warren sandbox cp data.csv ID:/home/user/data.csv\n" +
			"  warren sandbox cp ID:/home/user/out.png .\n" +
			"  warren sandbox cp ID:/etc/os-release -",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			srcID, srcPath := splitRemote(args[0])
			dstID, dstPath := splitRemote(args[1])
			if (srcID == "") == (dstID == "") {
				return errors.New("cp copies between here and a sandbox: exactly one side must be ID:PATH")
			}
			c, err := conn.client()
			if err != nil {
				return err
			}
			id := srcID + dstID
			sb, err := c.Connect(cmd.Context(), id, 0)
			if err != nil {
				return err
			}
			if srcID != "" {
				return download(cmd.Context(), sb, srcPath, dstPath, user)
			}
			return upload(cmd.Context(), sb, srcPath, dstPath, user)
		},
	}
	cmd.Flags().StringVarP(&user, "user", "u", "", "read or write as this user (root or user; default the sandbox's)")
	return cmd
}

// splitRemote parses ID:PATH; a local path (even one with a colon after a
// slash, or a lone "-") has no id.
func splitRemote(arg string) (id, p string) {
	i := strings.Index(arg, ":")
	if i <= 0 || strings.ContainsAny(arg[:i], "/.\\") {
		return "", arg
	}
	return arg[:i], arg[i+1:]
}

func upload(ctx context.Context, sb *warren.Sandbox, local, remote, user string) error {
	src, err := openSource(local)
	if err != nil {
		return err
	}
	defer src.Close()
	if remote, err = src.target(remote); err != nil {
		return fmt.Errorf("%s:%s: %w", sb.ID, remote, err)
	}
	return src.send(remote, func(r io.Reader) (string, error) {
		e, err := sb.Files.Upload(ctx, remote, r, warren.FileOptions{User: user})
		return e.Path, err
	})
}

func download(ctx context.Context, sb *warren.Sandbox, remote, local, user string) error {
	st, err := sb.Files.Stat(ctx, remote, warren.FileOptions{User: user})
	if err != nil {
		return err
	}
	if st.Type == "dir" {
		return fmt.Errorf("%s is a directory: cp copies single files", remote)
	}
	return receive(local, st.Name, st.Path, st.Size, func(w io.Writer) error {
		_, err := sb.Files.Download(ctx, remote, w, warren.FileOptions{User: user})
		return err
	})
}

// progress is a byte progress bar on stderr when stderr is a terminal,
// and silent otherwise (scripts, logs).
func progress(size int64, what string) *progressbar.ProgressBar {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return progressbar.DefaultBytesSilent(size, what)
	}
	return progressbar.DefaultBytes(size, what)
}
