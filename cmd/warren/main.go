// Command warren is the whole platform in one binary: `warren serve` runs
// the E2B-compatible API, the sandbox proxy and the sandbox manager; the
// other subcommands administer a data directory.
package main

import (
	"fmt"
	"os"
)

const usage = `warren: self-hosted, E2B-compatible sandboxes for AI agents

Usage:
  warren serve   [flags]            run the API server and sandboxes
  warren keys    create|list|revoke manage API keys in a data directory
  warren teams   set|list           per-team quotas in a data directory
  warren template build|list|get|delete|tag|untag   build and manage templates on a server
  warren image   import|list        import docker-save tarballs and OCI layouts for builds
  warren bench   [flags]            measure a running server against a runc baseline
  warren selftest isolation [flags] probe a running server's sandboxes for escapes
  warren version                    print the version

Run 'warren <command> -h' for a command's flags.
`

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = runServe(os.Args[2:])
	case "keys":
		err = runKeys(os.Args[2:])
	case "teams":
		err = runTeams(os.Args[2:])
	case "template":
		err = runTemplate(os.Args[2:])
	case "image":
		err = runImage(os.Args[2:])
	case "bench":
		err = runBench(os.Args[2:])
	case "selftest":
		err = runSelftest(os.Args[2:])
	case "version", "--version", "-v":
		fmt.Println("warren", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "warren: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "warren:", err)
		os.Exit(1)
	}
}
