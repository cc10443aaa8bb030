package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// cliConfig is what `warren login` stores: where the server is and the
// key to use. Flags and E2B_* variables override it.
type cliConfig struct {
	APIURL     string `json:"apiUrl"`
	APIKey     string `json:"apiKey"`
	SandboxURL string `json:"sandboxUrl,omitempty"`
	Domain     string `json:"domain,omitempty"`
}

// configPath is $WARREN_CONFIG, else $XDG_CONFIG_HOME/warren/config.json
// (~/.config/warren/config.json).
func configPath() (string, error) {
	if p := os.Getenv("WARREN_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory: %w", err)
	}
	return filepath.Join(dir, "warren", "config.json"), nil
}

func loadConfig() (cliConfig, error) {
	var c cliConfig
	p, err := configPath()
	if err != nil {
		return c, nil // no home (an MCP client may start us without one): no login file
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read %s: %w", p, err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s is not valid JSON: %w", p, err)
	}
	return c, nil
}

// saveConfig writes the config readable by its owner only: it holds a key.
func saveConfig(c cliConfig) (string, error) {
	p, err := configPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	data, _ := json.MarshalIndent(c, "", "  ")
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // WriteFile keeps an old file's mode
		return "", err
	}
	return p, os.Rename(tmp, p)
}

// connFlags are the flags every client command takes.
type connFlags struct{ apiURL, apiKey, sandboxURL, domain string }

func (f *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.apiURL, "api-url", "", "server URL (default: E2B_API_URL, then warren login's)")
	fs.StringVar(&f.apiKey, "api-key", "", "API key (default: E2B_API_KEY, then warren login's)")
	fs.StringVar(&f.sandboxURL, "sandbox-url", "", "where sandbox traffic goes (default: E2B_SANDBOX_URL, then the server URL)")
	fs.StringVar(&f.domain, "domain", "", "sandbox domain (default: E2B_DOMAIN, then warren login's)")
}

// config resolves each setting: a flag, else its E2B_* variable, else the
// login config. A login against warren sends sandbox traffic to the
// server URL unless told otherwise, as warren serves both on one address.
func (f *connFlags) config() (warren.Config, error) {
	file, err := loadConfig()
	if err != nil {
		return warren.Config{}, err
	}
	pick := func(flag, env, stored string) string {
		if flag != "" {
			return flag
		}
		if v := os.Getenv(env); v != "" {
			return v
		}
		return stored
	}
	cfg := warren.Config{
		APIURL:     pick(f.apiURL, "E2B_API_URL", file.APIURL),
		APIKey:     pick(f.apiKey, "E2B_API_KEY", file.APIKey),
		SandboxURL: pick(f.sandboxURL, "E2B_SANDBOX_URL", file.SandboxURL),
		Domain:     pick(f.domain, "E2B_DOMAIN", file.Domain),
	}
	if cfg.APIKey == "" {
		return cfg, errors.New("no API key: run `warren login`, set E2B_API_KEY or pass --api-key")
	}
	if cfg.APIURL == "" {
		return cfg, errors.New("no server: run `warren login`, set E2B_API_URL or pass --api-url")
	}
	if cfg.SandboxURL == "" && cfg.Domain == "" {
		cfg.SandboxURL = cfg.APIURL
	}
	return cfg, nil
}

func (f *connFlags) client() (*warren.Client, error) {
	cfg, err := f.config()
	if err != nil {
		return nil, err
	}
	return warren.New(cfg)
}
