package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/warren-sandbox/warren/internal/server"
	"github.com/warren-sandbox/warren/internal/store"
)

// goFlagsAnnotation marks the commands that parsed their flags with Go's
// flag package before they moved to cobra: they still take its spelling.
const goFlagsAnnotation = "warren/go-style-flags"

// markGoFlags annotates c and every command under it.
func markGoFlags(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[goFlagsAnnotation] = "true"
	for _, sub := range c.Commands() {
		markGoFlags(sub)
	}
	return c
}

// goStyleFlags rewrites -name and -name=value, Go's flag package's spelling
// of a long flag, to --name for the commands markGoFlags marked, so that a
// script written for them before cobra keeps working. Only names the
// command defines (and help) are rewritten, and never a flag's value, so
// shorthands such as -f stay pflag's.
func goStyleFlags(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Annotations[goFlagsAnnotation] == "" {
		return args
	}
	cmd.InitDefaultHelpFlag()
	lookup := func(name string) *pflag.Flag {
		fs := []*pflag.FlagSet{cmd.Flags(), cmd.InheritedFlags()}
		for _, f := range fs {
			if len(name) == 1 {
				if fl := f.ShorthandLookup(name); fl != nil {
					return fl
				}
			} else if fl := f.Lookup(name); fl != nil {
				return fl
			}
		}
		return nil
	}
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		dashes := len(a) - len(strings.TrimLeft(a, "-"))
		if dashes == 0 || dashes > 2 || name == "" || (dashes == 2 && len(name) == 1) {
			continue // a positional argument
		}
		f := lookup(name)
		if f == nil {
			continue // not this command's: pflag reports it
		}
		if dashes == 1 && len(name) > 1 {
			out[i] = "-" + a
		}
		if !inline && f.NoOptDefVal == "" {
			i++ // the next argument is this flag's value, whatever it looks like
		}
	}
	return out
}

// flagAliases keeps the older spellings of flags working: --url (template,
// image, bench, selftest) is --api-url as in the other client commands, and
// --f (Go's flag package took it for template build's -f) is --file.
func flagAliases(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	switch name {
	case "url":
		return "api-url"
	case "f":
		return "file"
	}
	return pflag.NormalizedName(name)
}

// parentCommand is a command that only groups subcommands. Run alone or with
// an unknown subcommand it is an error (exit status 1), as these commands
// always were, not cobra's help with status 0.
func parentCommand(use, short, group string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, GroupID: group,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			if len(args) == 0 {
				return fmt.Errorf("%s needs a command: %s (see %s --help)", commandName(cmd), strings.Join(names, ", "), cmd.CommandPath())
			}
			return fmt.Errorf("unknown %s command %q: want %s", commandName(cmd), args[0], strings.Join(names, ", "))
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}

// usageArgs is v with the command's usage line added to its error.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return fmt.Errorf("%s: %w\nusage: %s", commandName(cmd), err, cmd.UseLine())
		}
		return nil
	}
}

// commandName is cmd's path without the root's name, which main's error
// prefix already says.
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// storeFlags name the database the administration commands work on: the
// data directory's SQLite (safe while the server runs: WAL) or, with
// --store, a cluster's Postgres.
type storeFlags struct{ dataDir, store string }

func (s *storeFlags) register(cmd *cobra.Command) {
	fs := cmd.PersistentFlags()
	fs.StringVar(&s.dataDir, "data-dir", server.DefaultDataDir, "data directory of the server")
	fs.StringVar(&s.store, "store", os.Getenv(server.StoreEnv), server.StoreFlagHelp)
	_ = cmd.MarkPersistentFlagDirname("data-dir")
}

// with runs f on the store the flags name, and closes it.
func (s *storeFlags) with(ctx context.Context, f func(store.Store) error) error {
	st, err := server.OpenStore(ctx, s.store, s.dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st)
}
