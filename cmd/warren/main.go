// Command warren is the whole platform in one binary: `warren serve` runs
// the E2B-compatible API, the sandbox proxy and the sandbox manager;
// `warren sandbox` and `warren template` are clients of a server, on the
// Go SDK; `warren mcp` serves agents over MCP; the other subcommands
// administer a data directory.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

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

func rootCommand() *cobra.Command {
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
	for _, c := range []struct {
		name, args, short string
		run               func([]string) error
		group             string
	}{
		{"serve", "[flags]", "run the API server and sandboxes", runServe, "server"},
		{"keys", "create|list|revoke", "manage API keys in a data directory", runKeys, "server"},
		{"teams", "set|list", "per-team quotas in a data directory", runTeams, "server"},
		{"image", "import|list", "import docker-save tarballs and OCI layouts for builds", runImage, "server"},
		{"bench", "[flags]", "measure a running server against a runc baseline", runBench, "server"},
		{"selftest", "isolation [flags]", "probe a running server's sandboxes for escapes", runSelftest, "server"},
		{"template", "build|list|get|delete|tag|untag", "build and manage templates on a server", runTemplate, "client"},
	} {
		root.AddCommand(passthrough(c.name, c.args, c.short, c.group, c.run))
	}
	root.AddCommand(sandboxCommand(), nodesCommand(), loginCommand(), mcpCommand())
	root.AddCommand(&cobra.Command{Use: "version", Short: "print the version", Args: cobra.NoArgs,
		Run: func(*cobra.Command, []string) { fmt.Println("warren", version) }})
	return root
}

// passthrough wraps a command that parses its own flags with the standard
// library, as the server-side commands always have.
func passthrough(name, args, short, group string, run func([]string) error) *cobra.Command {
	return &cobra.Command{
		Use: name + " " + args, Short: short, GroupID: group,
		DisableFlagParsing: true,
		RunE:               func(_ *cobra.Command, a []string) error { return run(a) },
	}
}

// explain adds what a user can do about the common errors.
func explain(err error) string {
	if errors.Is(err, warren.ErrUnauthorized) {
		return err.Error() + " (check the API key: `warren login`, E2B_API_KEY or --api-key)"
	}
	return err.Error()
}
