package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/pkg/warren"
	_ "github.com/warren-sandbox/warren/pkg/warren/dockerfile" // BuildDockerfile's converter, for `warren template build`
)

// serverFound says how the client commands find the server.
const serverFound = "The server is found as by the other client commands: --api-url (or --url) and\n" +
	"--api-key, then E2B_API_URL and E2B_API_KEY, then what warren login saved."

// templateOptions are `warren template`'s flags.
type templateOptions struct {
	conn  connFlags
	build buildFlags
}

// templateCommand is `warren template ...`: a client of the server's
// template API, as the SDKs are.
func templateCommand(o *templateOptions) *cobra.Command {
	client := func(run func(*warren.Client, []string) error) func(*cobra.Command, []string) error {
		return withClient(&o.conn, func(_ context.Context, c *warren.Client, args []string) error { return run(c, args) })
	}
	build := &cobra.Command{
		Use:   "build [-f Dockerfile] --name NAME [--tag T]... [--build-arg K=V]... [DIR]",
		Short: "build a template from a Dockerfile (DIR defaults to .)",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE:  client(func(c *warren.Client, args []string) error { return templateBuild(c, o.build, args) }),
	}
	o.build.register(build)
	cmd := parentCommand("template", "build and manage templates on a server", "client", build,
		&cobra.Command{Use: "list", Short: "list the templates", Args: usageArgs(cobra.NoArgs), RunE: client(templateList)},
		&cobra.Command{Use: "get NAME[:TAG]", Short: "show a template, its tags and builds", Args: usageArgs(cobra.ExactArgs(1)), RunE: client(templateGet)},
		&cobra.Command{Use: "delete NAME", Short: "delete a template", Args: usageArgs(cobra.ExactArgs(1)), RunE: client(templateDelete)},
		&cobra.Command{Use: "tag NAME[:TAG] TAG...", Short: "point tags at a build (the latest by default)", Args: usageArgs(cobra.MinimumNArgs(2)), RunE: client(templateTag)},
		&cobra.Command{Use: "untag NAME TAG...", Short: "remove tags", Args: usageArgs(cobra.MinimumNArgs(2)), RunE: client(templateUntag)},
	)
	cmd.Long = serverFound
	o.conn.register(cmd.PersistentFlags())
	return cmd
}

// buildFlags are template build's own flags.
type buildFlags struct {
	file, name, readyCmd string
	target               string
	tags, buildArgs      []string
	cpu, memory          int
	noCache              bool
}

func (f *buildFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVarP(&f.file, "file", "f", "", "Dockerfile (default DIR/Dockerfile)")
	fs.StringVar(&f.name, "name", "", "template name (NAME or NAME:TAG)")
	fs.StringVar(&f.readyCmd, "ready-cmd", "", "shell command that must succeed before a sandbox's create returns")
	fs.StringArrayVar(&f.tags, "tag", nil, "tag for this build (repeatable)")
	fs.StringArrayVar(&f.buildArgs, "build-arg", nil, "KEY=VALUE for an ARG (repeatable)")
	fs.StringVar(&f.target, "target", "", "build this stage (FROM ... AS NAME) and not the ones after it")
	fs.IntVar(&f.cpu, "cpu", 0, "CPUs of sandboxes from the template")
	fs.IntVar(&f.memory, "memory", 0, "memory (MiB) of sandboxes from the template")
	fs.BoolVar(&f.noCache, "no-cache", false, "rebuild every step instead of reusing cached layers")
	_ = cmd.MarkFlagFilename("file")
}

func templateBuild(c *warren.Client, f buildFlags, rest []string) error {
	dir := "."
	if len(rest) > 0 {
		dir = rest[0]
	}
	if f.file == "" {
		f.file = filepath.Join(dir, "Dockerfile")
	}
	if f.name == "" {
		return errors.New("template build: --name is required")
	}
	return buildDockerfile(c, f, dir)
}

func buildDockerfile(c *warren.Client, f buildFlags, dir string) error {
	args := map[string]string{}
	for _, kv := range f.buildArgs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			v, ok = os.LookupEnv(k) // docker's --build-arg NAME takes the environment's
		}
		if ok {
			args[k] = v
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	_, err := c.BuildDockerfile(ctx, warren.DockerfileBuild{
		Name: f.name, Tags: f.tags, Dir: dir, Dockerfile: f.file, BuildArgs: args, Target: f.target,
		ReadyCmd: f.readyCmd, NoCache: f.noCache, CPUCount: f.cpu, MemoryMB: f.memory,
		OnLog:     printLog,
		OnWarning: func(w string) { fmt.Fprintln(os.Stderr, "warning:", w) },
	})
	if err != nil {
		return err
	}
	fmt.Printf("\nBuilt %s in %s. Start a sandbox with Sandbox.create('%s').\n", f.name, time.Since(start).Round(100*time.Millisecond), f.name)
	return nil
}

// printLog prints build log lines: step headers stand out as progress.
func printLog(e warren.BuildLogEntry) {
	msg := e.Message
	switch {
	case strings.HasPrefix(msg, "["):
		fmt.Printf("\n=> %s\n", msg)
	case e.Level == "error":
		fmt.Fprintf(os.Stderr, "ERROR %s\n", msg)
	default:
		fmt.Printf("   %s\n", msg)
	}
}

func templateList(c *warren.Client, _ []string) error {
	ts, err := c.ListTemplates(context.Background())
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tID\tSTATUS\tCPU\tMEMORY\tUPDATED")
	for _, t := range ts {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d MiB\t%s\n", strings.Join(t.Names, ","), t.ID, t.BuildStatus, t.CPUCount, t.MemoryMB, t.UpdatedAt.Format(time.DateTime))
	}
	return w.Flush()
}

func templateGet(c *warren.Client, args []string) error {
	ctx := context.Background()
	t, err := c.GetTemplate(ctx, args[0])
	if err != nil {
		return err
	}
	fmt.Printf("name:     %s\nid:       %s\ncreated:  %s\n", strings.Join(t.Names, ","), t.ID, t.CreatedAt.Format(time.DateTime))
	if tags, err := c.TemplateTags(ctx, t.ID); err == nil && len(tags) > 0 {
		fmt.Println("tags:")
		for _, tg := range tags {
			fmt.Printf("  %-12s %s\n", tg.Tag, tg.BuildID)
		}
	}
	fmt.Println("builds:")
	for _, b := range t.Builds {
		fmt.Printf("  %s  %-8s  %s\n", b.ID, b.Status, b.CreatedAt.Format(time.DateTime))
	}
	return nil
}

func templateDelete(c *warren.Client, args []string) error {
	if err := c.DeleteTemplate(context.Background(), args[0]); err != nil {
		return err
	}
	fmt.Println("deleted", args[0])
	return nil
}

func templateTag(c *warren.Client, args []string) error {
	res, err := c.AssignTags(context.Background(), args[0], args[1:])
	if err != nil {
		return err
	}
	fmt.Printf("tagged build %s: %s\n", res.BuildID, strings.Join(res.Tags, ", "))
	return nil
}

func templateUntag(c *warren.Client, args []string) error {
	return c.RemoveTags(context.Background(), args[0], args[1:])
}
