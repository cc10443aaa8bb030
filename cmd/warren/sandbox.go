package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// sandboxCommand is `warren sandbox`: the sandbox lifecycle from a
// terminal, on the Go SDK.
func sandboxCommand() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{Use: "sandbox", Aliases: []string{"sb"}, Short: "create, list, inspect and use sandboxes", GroupID: "client"}
	conn.register(cmd.PersistentFlags())
	cmd.AddCommand(sandboxCreate(&conn), sandboxList(&conn), sandboxInfo(&conn), sandboxKill(&conn),
		sandboxPause(&conn), sandboxResume(&conn), sandboxLogs(&conn), sandboxMetrics(&conn),
		sandboxExec(&conn), sandboxShell(&conn), sandboxCopy(&conn))
	return cmd
}

func sandboxCreate(conn *connFlags) *cobra.Command {
	var template string
	var timeout time.Duration
	var envs, metadata map[string]string
	var volumes []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "start a sandbox; its id is the last line printed",
		Args:  cobra.NoArgs,
		RunE: withClient(conn, func(ctx context.Context, c *warren.Client, _ []string) error {
			mounts, err := parseVolumeMounts(volumes)
			if err != nil {
				return err
			}
			sb, err := c.Create(ctx, template, warren.CreateOptions{Timeout: timeout, EnvVars: envs, Metadata: metadata, VolumeMounts: mounts})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(map[string]string{"sandboxID": sb.ID, "templateID": sb.TemplateID, "envdAccessToken": sb.EnvdAccessToken})
			}
			fmt.Fprintf(os.Stderr, "created a sandbox from %s\n", template)
			fmt.Println(sb.ID)
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVarP(&template, "template", "t", "base", "template name, name:tag, id or snapshot")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long the sandbox lives (whole seconds)")
	f.StringToStringVarP(&envs, "env", "e", nil, "environment variable K=V for its processes (repeatable)")
	f.StringToStringVarP(&metadata, "metadata", "m", nil, "metadata K=V (repeatable)")
	f.StringArrayVar(&volumes, "volume", nil, "mount the team's volume NAME read-write at /path: NAME:/path (repeatable)")
	f.BoolVar(&asJSON, "json", false, "print the sandbox as JSON")
	_ = cmd.RegisterFlagCompletionFunc("volume", completeVolumeMount(conn))
	return cmd
}

// completeVolumeMount completes --volume with the team's volume names, as
// NAME:/ for the mount path to follow.
func completeVolumeMount(conn *connFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		names, d := completeVolumes(conn)(cmd, nil, "")
		for i, n := range names {
			name, id, _ := strings.Cut(n, "\t")
			names[i] = name + ":/\t" + id
		}
		return names, d | cobra.ShellCompDirectiveNoSpace
	}
}

// parseVolumeMounts parses --volume NAME:/path values. Only the shape is
// checked here; the server says whether the volume exists and the path is
// allowed.
func parseVolumeMounts(args []string) ([]warren.VolumeMount, error) {
	var out []warren.VolumeMount
	for _, a := range args {
		name, p, ok := strings.Cut(a, ":")
		if !ok || name == "" || !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("--volume %q: want NAME:/path, such as data:/mnt/data", a)
		}
		out = append(out, warren.VolumeMount{Name: name, Path: p})
	}
	return out, nil
}

// mountList is a sandbox's mounts as NAME:/path,… ("" for none).
func mountList(m []warren.VolumeMount) string {
	out := make([]string, len(m))
	for i, vm := range m {
		out[i] = vm.Name + ":" + vm.Path
	}
	return strings.Join(out, ",")
}

func sandboxList(conn *connFlags) *cobra.Command {
	var metadata map[string]string
	var state string
	var asJSON, quiet bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "list running and paused sandboxes",
		Args:    cobra.NoArgs,
		RunE: withClient(conn, func(ctx context.Context, c *warren.Client, _ []string) error {
			all, err := listAll(ctx, c, warren.ListOptions{Metadata: metadata, State: state})
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				return printJSON(all)
			case quiet:
				for _, s := range all {
					fmt.Println(s.ID)
				}
				return nil
			}
			return printSandboxes(all)
		}),
	}
	f := cmd.Flags()
	f.StringToStringVarP(&metadata, "metadata", "m", nil, "only sandboxes with this metadata K=V (repeatable)")
	f.StringVar(&state, "state", "", "only running or paused sandboxes")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVarP(&quiet, "quiet", "q", false, "print ids only")
	return cmd
}

// listAll follows the list's pages.
func listAll(ctx context.Context, c *warren.Client, o warren.ListOptions) ([]warren.Info, error) {
	var all []warren.Info
	for {
		page, next, err := c.List(ctx, o)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" {
			return all, nil
		}
		o.NextToken = next
	}
}

func printSandboxes(all []warren.Info) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTEMPLATE\tSTATE\tSTARTED\tENDS\tCPU\tMEMORY\tMETADATA\tVOLUMES")
	for _, s := range all {
		tpl := s.TemplateID
		if s.Alias != "" {
			tpl = s.Alias
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s ago\tin %s\t%d\t%d MiB\t%s\t%s\n", s.ID, tpl, s.State,
			since(s.StartedAt), until(s.EndAt), s.CPUCount, s.MemoryMB, pairs(s.Metadata), mountList(s.VolumeMounts))
	}
	return w.Flush()
}

func since(t time.Time) string { return time.Since(t).Round(time.Second).String() }
func until(t time.Time) string { return max(time.Until(t), 0).Round(time.Second).String() }

func pairs(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
