package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/warren-sandbox/warren/pkg/warren"
)

func loginCommand() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use:   "login",
		Short: "store a server's URL and API key for the client commands",
		Long: "Checks the key against the server, then writes the config file (mode 0600):\n" +
			"$WARREN_CONFIG, else ~/.config/warren/config.json. Flags and E2B_* variables override it.\n" +
			"Without --api-key the key is read from stdin (without echo on a terminal).",
		GroupID: "client",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if conn.apiURL == "" {
				conn.apiURL = os.Getenv("E2B_API_URL")
			}
			if conn.apiURL == "" {
				return errors.New("--api-url is required (e.g. http://127.0.0.1:3000)")
			}
			if conn.apiKey == "" {
				key, err := readKey()
				if err != nil {
					return err
				}
				conn.apiKey = key
			}
			stored := cliConfig{APIURL: strings.TrimRight(conn.apiURL, "/"), APIKey: conn.apiKey, SandboxURL: conn.sandboxURL, Domain: conn.domain}
			c, err := warren.New(warren.Config{APIURL: stored.APIURL, APIKey: stored.APIKey})
			if err != nil {
				return err
			}
			if _, _, err := c.List(cmd.Context(), warren.ListOptions{Limit: 1}); err != nil {
				return fmt.Errorf("the server refused the key: %w", err)
			}
			p, err := saveConfig(stored)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "logged in to %s; saved in %s\n", stored.APIURL, p)
			return nil
		},
	}
	conn.register(cmd.Flags())
	return cmd
}

func readKey() (string, error) {
	fd := int(os.Stdin.Fd())
	if term.IsTerminal(fd) {
		fmt.Fprint(os.Stderr, "API key: ")
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(os.Stderr)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	}
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if key := strings.TrimSpace(line); key != "" {
		return key, nil
	}
	return "", fmt.Errorf("no API key on stdin: %w", err)
}
