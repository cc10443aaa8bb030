package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

const templateUsage = `usage: warren template <command> [flags]

  build  -f Dockerfile --name NAME [--tag T]... [--build-arg K=V]... [--target STAGE] [--cpu N] [--memory MB] [--ready-cmd CMD] [--no-cache] [DIR]
  list
  get    NAME[:TAG]
  delete NAME
  tag    NAME[:TAG] TAG...        point tags at a build (the latest by default)
  untag  NAME TAG...

The server is found as by the other client commands: --url and --api-key,
then E2B_API_URL and E2B_API_KEY, then what warren login saved.`

// runTemplate dispatches `warren template ...`: a client of the server's
// template API, as the SDKs are.
func runTemplate(args []string) error {
	if len(args) == 0 {
		return errors.New(templateUsage)
	}
	var bf buildFlags
	cmds := map[string]func(*warren.Client, []string) error{
		"build": func(c *warren.Client, rest []string) error { return templateBuild(c, bf, rest) },
		"list":  templateList, "get": templateGet,
		"delete": templateDelete, "tag": templateTag, "untag": templateUntag,
	}
	run, ok := cmds[args[0]]
	if !ok {
		return fmt.Errorf("unknown template command %q\n\n%s", args[0], templateUsage)
	}
	fs := flag.NewFlagSet("template "+args[0], flag.ContinueOnError)
	url, key := serverFlags(fs)
	if args[0] == "build" {
		bf.register(fs)
	}
	// Flags may follow the positional arguments: parse what is left again.
	rest, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	c, err := client(*url, *key)
	if err != nil {
		return err
	}
	return run(c, rest)
}

func serverFlags(fs *flag.FlagSet) (*string, *string) {
	return fs.String("url", "", "server URL (default: E2B_API_URL, then warren login's)"),
		fs.String("api-key", "", "API key (default: E2B_API_KEY, then warren login's)")
}

// client finds the server as the other client commands do: flags, then
// E2B_* variables, then `warren login`'s file.
func client(url, key string) (*warren.Client, error) {
	conn := connFlags{apiURL: url, apiKey: key}
	return conn.client()
}

// parseInterleaved parses flags wherever they appear among args.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// buildFlags are template build's own flags.
type buildFlags struct {
	file, name, readyCmd string
	target               string
	tags, buildArgs      multi
	cpu, memory          int
	noCache              bool
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func (f *buildFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "f", "", "Dockerfile (default DIR/Dockerfile)")
	fs.StringVar(&f.name, "name", "", "template name (NAME or NAME:TAG)")
	fs.StringVar(&f.readyCmd, "ready-cmd", "", "shell command that must succeed before a sandbox's create returns")
	fs.Var(&f.tags, "tag", "tag for this build (repeatable)")
	fs.Var(&f.buildArgs, "build-arg", "KEY=VALUE for an ARG (repeatable)")
	fs.StringVar(&f.target, "target", "", "build this stage (FROM ... AS NAME) and not the ones after it")
	fs.IntVar(&f.cpu, "cpu", 0, "CPUs of sandboxes from the template")
	fs.IntVar(&f.memory, "memory", 0, "memory (MiB) of sandboxes from the template")
	fs.BoolVar(&f.noCache, "no-cache", false, "rebuild every step instead of reusing cached layers")
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
	if len(args) != 1 {
		return errors.New("usage: warren template get NAME[:TAG]")
	}
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
	if len(args) != 1 {
		return errors.New("usage: warren template delete NAME")
	}
	if err := c.DeleteTemplate(context.Background(), args[0]); err != nil {
		return err
	}
	fmt.Println("deleted", args[0])
	return nil
}

func templateTag(c *warren.Client, args []string) error {
	if len(args) < 2 {
		return errors.New("usage: warren template tag NAME[:TAG] TAG...")
	}
	res, err := c.AssignTags(context.Background(), args[0], args[1:])
	if err != nil {
		return err
	}
	fmt.Printf("tagged build %s: %s\n", res.BuildID, strings.Join(res.Tags, ", "))
	return nil
}

func templateUntag(c *warren.Client, args []string) error {
	if len(args) < 2 {
		return errors.New("usage: warren template untag NAME TAG...")
	}
	return c.RemoveTags(context.Background(), args[0], args[1:])
}
