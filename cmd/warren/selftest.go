package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/internal/selftest"
)

// selftestOptions are `warren selftest isolation`'s flags.
type selftestOptions struct{ url, key, template, run string }

// selftestCommand is `warren selftest isolation`: it runs the escape probes
// against a live server (on this host: some probes listen on the sandbox
// bridge's address) and exits non-zero if any escaped.
func selftestCommand(o *selftestOptions) *cobra.Command {
	iso := &cobra.Command{
		Use:   "isolation [--api-url URL] [--api-key KEY] [--template base] [--run REGEXP]",
		Short: "probe a running server's sandboxes for escapes",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(*cobra.Command, []string) error { return o.isolation() },
	}
	fs := iso.Flags()
	fs.StringVar(&o.url, "api-url", os.Getenv("E2B_API_URL"), "server URL (E2B_API_URL)")
	fs.StringVar(&o.key, "api-key", os.Getenv("E2B_API_KEY"), "API key (E2B_API_KEY)")
	fs.StringVar(&o.template, "template", "base", "template the probed sandboxes are made from")
	fs.StringVar(&o.run, "run", "", "run only the probes whose names match this regular expression")
	return parentCommand("selftest", "probe a running server's sandboxes for escapes", "server", iso)
}

func (o *selftestOptions) isolation() error {
	var filter *regexp.Regexp
	if o.run != "" {
		re, err := regexp.Compile(o.run)
		if err != nil {
			return fmt.Errorf("selftest: --run: %w", err)
		}
		filter = re
	}
	probes := selftest.Select(filter)
	if len(probes) == 0 {
		return fmt.Errorf("selftest: no probe matches %q", o.run)
	}
	if o.url == "" || o.key == "" {
		return errors.New("selftest: set E2B_API_URL and E2B_API_KEY (or --api-url, --api-key)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := &selftest.Client{URL: strings.TrimRight(o.url, "/"), APIKey: o.key, HTTP: &http.Client{}}
	env, cleanup, err := selftest.Setup(ctx, c, o.template)
	if err != nil {
		return err
	}
	defer cleanup()
	escaped := 0
	for _, v := range selftest.Run(ctx, env, probes, os.Stdout) {
		if v.Err != nil {
			escaped++
		}
	}
	fmt.Printf("\n%d of %d probes held\n", len(probes)-escaped, len(probes))
	if escaped > 0 {
		return fmt.Errorf("%d probes escaped", escaped)
	}
	return nil
}
