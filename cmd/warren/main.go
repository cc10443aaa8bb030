// Command warren is the whole platform in one binary: `warren serve` runs
// the E2B-compatible API, the sandbox proxy and the sandbox manager;
// `warren sandbox` and `warren template` are clients of a server, on the
// Go SDK; `warren mcp` serves agents over MCP; the other subcommands
// administer a data directory. Every command is a cobra command.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/internal/bench"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries a status to exit with and no message of its own: a
// sandbox command's, for `warren sandbox exec`.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	defer func() {
		// A bug should still read as one line to a user, not a stack trace.
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "warren: internal error: %v (please report it, with the command)\n", r)
			os.Exit(2)
		}
	}()
	root := rootCommand()
	root.SetArgs(goStyleFlags(root, os.Args[1:]))
	err := root.Execute()
	var exit exitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		os.Exit(exit.code)
	default:
		fmt.Fprintln(os.Stderr, "warren:", strings.TrimPrefix(explain(err), "warren: "))
		os.Exit(1)
	}
}

// cliOptions hold what the flags of the commands that have options of
// their own parse into, so that a test can read them after parsing.
type cliOptions struct {
	serve    serveOptions
	keys     keysOptions
	teams    teamsOptions
	image    connFlags
	bench    bench.Config
	selftest selftestOptions
	template templateOptions
}

func rootCommand() *cobra.Command { return newRoot(&cliOptions{}) }

func newRoot(o *cliOptions) *cobra.Command {
	root := &cobra.Command{
		Use:           "warren",
		Short:         "Self-hosted, E2B-compatible sandboxes for AI agents",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("warren {{.Version}}\n")
	root.AddGroup(&cobra.Group{ID: "server", Title: "Run and administer a server:"},
		&cobra.Group{ID: "client", Title: "Use a server:"})
	for _, c := range []*cobra.Command{serveCommand(&o.serve), keysCommand(&o.keys), teamsCommand(&o.teams),
		imageCommand(&o.image), benchCommand(&o.bench), selftestCommand(&o.selftest), templateCommand(&o.template)} {
		root.AddCommand(markGoFlags(c))
	}
	root.AddCommand(sandboxCommand(), volumeCommand(), nodesCommand(), loginCommand(), mcpCommand())
	root.AddCommand(&cobra.Command{Use: "version", Short: "print the version", Args: cobra.NoArgs,
		Run: func(*cobra.Command, []string) { fmt.Println("warren", version) }})
	root.SetGlobalNormalizationFunc(flagAliases)
	return root
}

// explain adds what a user can do about the common errors.
func explain(err error) string {
	if errors.Is(err, warren.ErrUnauthorized) {
		return err.Error() + " (check the API key: `warren login`, E2B_API_KEY or --api-key)"
	}
	return err.Error()
}
