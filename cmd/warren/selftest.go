package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
)

// runSelftest implements `warren selftest isolation`: it runs the escape
// probes against a live server (on this host: some probes listen on the
// sandbox bridge's address) and exits non-zero if any escaped.
func runSelftest(args []string) error {
	if len(args) == 0 || args[0] != "isolation" {
		return errors.New("usage: warren selftest isolation [--url URL] [--api-key KEY] [--template base] [--run REGEXP]")
	}
	fs := flag.NewFlagSet("selftest isolation", flag.ContinueOnError)
	url := fs.String("url", os.Getenv("E2B_API_URL"), "server URL (E2B_API_URL)")
	key := fs.String("api-key", os.Getenv("E2B_API_KEY"), "API key (E2B_API_KEY)")
	template := fs.String("template", "base", "template the probed sandboxes are made from")
	run := fs.String("run", "", "run only the probes whose names match this regular expression")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var filter *regexp.Regexp
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			return fmt.Errorf("selftest: --run: %w", err)
		}
		filter = re
	}
	probes := selftest.Select(filter)
	if len(probes) == 0 {
		return fmt.Errorf("selftest: no probe matches %q", *run)
	}
	if *url == "" || *key == "" {
		return errors.New("selftest: set E2B_API_URL and E2B_API_KEY (or --url, --api-key)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := &selftest.Client{URL: strings.TrimRight(*url, "/"), APIKey: *key, HTTP: &http.Client{}}
	env, cleanup, err := selftest.Setup(ctx, c, *template)
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
