package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// volumeCommand is `warren volume`: teams' persistent volumes from a
// terminal, on the Go SDK. A volume is named by its name or its id;
// VOLUME:/path names a path in one.
func volumeCommand() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{Use: "volume", Aliases: []string{"vol"}, Short: "create, list and use persistent volumes", GroupID: "client"}
	conn.register(cmd.PersistentFlags())
	cmd.AddCommand(volumeCreate(&conn), volumeList(&conn), volumeRemove(&conn), volumeToken(&conn),
		volumeCat(&conn), volumeCopy(&conn), volumeMkdir(&conn))
	return cmd
}

func volumeCreate(conn *connFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "create a volume (letters, digits, _ and -, unique in the team); its id is printed",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: withClient(conn, func(ctx context.Context, c *warren.Client, args []string) error {
			v, err := c.CreateVolume(ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(volumeJSON(v, true))
			}
			fmt.Println(v.ID)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the volume, with its token, as JSON")
	return cmd
}

func volumeList(conn *connFlags) *cobra.Command {
	var asJSON, quiet bool
	cmd := &cobra.Command{
		Use:     "ls [VOLUME:/dir]",
		Aliases: []string{"list"},
		Short:   "list the volumes, or what is in a directory of one",
		Args:    usageArgs(cobra.MaximumNArgs(1)),
		RunE: withClient(conn, func(ctx context.Context, c *warren.Client, args []string) error {
			if len(args) == 1 {
				return listVolumeDir(ctx, c, args[0], asJSON)
			}
			all, err := c.ListVolumes(ctx)
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				out := make([]map[string]any, len(all))
				for i, v := range all {
					out[i] = volumeJSON(v, false)
				}
				return printJSON(out)
			case quiet:
				for _, v := range all {
					fmt.Println(v.ID)
				}
				return nil
			}
			return printVolumes(all)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print ids only")
	return cmd
}

func printVolumes(all []*warren.Volume) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tID\tSIZE LIMIT\tUSED\tMOUNTED BY")
	for _, v := range all {
		limit := "-"
		if v.SizeMB > 0 {
			limit = strconv.Itoa(v.SizeMB) + " MiB"
		}
		mounted := strings.Join(v.Sandboxes, ",")
		if mounted == "" {
			mounted = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", v.Name, v.ID, limit, humanBytes(v.UsedBytes), mounted)
	}
	return w.Flush()
}

func listVolumeDir(ctx context.Context, c *warren.Client, arg string, asJSON bool) error {
	v, p, err := volumePath(ctx, c, arg)
	if err != nil {
		return err
	}
	entries, err := v.List(ctx, p, 1)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(entries)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MODE\tUID\tGID\tSIZE\tMODIFIED\tNAME")
	for _, e := range entries {
		name := e.Name
		switch e.Type {
		case warren.VolumeDirectory:
			name += "/"
		case warren.VolumeSymlink:
			name += " -> " + e.Target
		}
		fmt.Fprintf(w, "%04o\t%d\t%d\t%d\t%s\t%s\n", e.Mode, e.UID, e.GID, e.Size, e.MTime.Local().Format("2006-01-02 15:04"), name)
	}
	return w.Flush()
}

// volumeArgCommand is a command on one volume, whose name the shell
// completes.
func volumeArgCommand(conn *connFlags, use, short string, run clientRun) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeVolumes(conn), RunE: withClient(conn, run)}
}

func volumeRemove(conn *connFlags) *cobra.Command {
	return volumeArgCommand(conn, "rm ID|NAME|VOLUME:/path",
		"delete a volume with its data, or remove a path (a directory with everything in it) from one",
		func(ctx context.Context, c *warren.Client, args []string) error {
			if name, _ := splitRemote(args[0]); name != "" {
				v, p, err := volumePath(ctx, c, args[0])
				if err != nil {
					return err
				}
				return v.Remove(ctx, p)
			}
			v, err := findVolume(ctx, c, args[0])
			if err != nil {
				return err
			}
			return c.DeleteVolume(ctx, v.ID)
		})
}

func volumeToken(conn *connFlags) *cobra.Command {
	return volumeArgCommand(conn, "token ID|NAME", "print the bearer token of a volume's content API",
		func(ctx context.Context, c *warren.Client, args []string) error {
			v, err := openVolume(ctx, c, args[0])
			if err != nil {
				return err
			}
			fmt.Println(v.Token)
			return nil
		})
}

func volumeMkdir(conn *connFlags) *cobra.Command {
	var parents bool
	var mode string
	cmd := &cobra.Command{
		Use:   "mkdir VOLUME:/dir",
		Short: "make a directory in a volume",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: withClient(conn, func(ctx context.Context, c *warren.Client, args []string) error {
			o, err := writeOptions(mode, parents)
			if err != nil {
				return err
			}
			v, p, err := volumePath(ctx, c, args[0])
			if err != nil {
				return err
			}
			_, err = v.MakeDir(ctx, p, o)
			return err
		}),
	}
	cmd.Flags().BoolVarP(&parents, "parents", "p", false, "make missing parents; an existing directory is no error")
	cmd.Flags().StringVar(&mode, "mode", "", "permission bits, octal (default 0755)")
	return cmd
}

// writeOptions parses an octal --mode ("" = the server's default).
func writeOptions(mode string, force bool) (warren.VolumeWriteOptions, error) {
	o := warren.VolumeWriteOptions{Force: force}
	if mode == "" {
		return o, nil
	}
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil || m > 0o7777 {
		return o, fmt.Errorf("--mode %q: want permission bits in octal, such as 0644", mode)
	}
	m32 := uint32(m)
	o.Mode = &m32
	return o, nil
}

// completeVolumes completes a volume's name (its id shown beside it).
func completeVolumes(conn *connFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		c, err := conn.client()
		if len(args) > 0 || err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		all, err := c.ListVolumes(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(all))
		for _, v := range all {
			names = append(names, v.Name+"\t"+v.ID)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// findVolume finds a volume by id or by name, without its token.
func findVolume(ctx context.Context, c *warren.Client, idOrName string) (*warren.Volume, error) {
	all, err := c.ListVolumes(ctx)
	if err != nil {
		return nil, err
	}
	var byName []*warren.Volume
	for _, v := range all {
		if v.ID == idOrName {
			return v, nil
		}
		if v.Name == idOrName {
			byName = append(byName, v)
		}
	}
	switch len(byName) {
	case 0:
		return nil, fmt.Errorf("no volume %q: %w", idOrName, warren.ErrNotFound)
	case 1:
		return byName[0], nil
	}
	// The admin key sees every team's volumes, whose names may repeat.
	return nil, fmt.Errorf("%d volumes are named %q (in several teams): name it by its id", len(byName), idOrName)
}

// openVolume is findVolume with the token its content calls need.
func openVolume(ctx context.Context, c *warren.Client, idOrName string) (*warren.Volume, error) {
	v, err := findVolume(ctx, c, idOrName)
	if err != nil {
		return nil, err
	}
	return c.GetVolume(ctx, v.ID)
}

// volumePath opens the volume of VOLUME:/path and returns the path ("/"
// when empty).
func volumePath(ctx context.Context, c *warren.Client, arg string) (*warren.Volume, string, error) {
	name, p := splitRemote(arg)
	if name == "" {
		return nil, "", fmt.Errorf("%q is not VOLUME:/path", arg)
	}
	if p == "" {
		p = "/"
	}
	v, err := openVolume(ctx, c, name)
	return v, p, err
}

func volumeJSON(v *warren.Volume, withToken bool) map[string]any {
	out := map[string]any{"volumeID": v.ID, "name": v.Name, "sizeMB": v.SizeMB, "usedBytes": v.UsedBytes,
		"sandboxes": v.Sandboxes}
	if !v.CreatedAt.IsZero() {
		out["createdAt"] = v.CreatedAt
	}
	if withToken {
		out["token"] = v.Token
	}
	return out
}

// humanBytes is n in the largest binary unit that keeps it at least 1.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
