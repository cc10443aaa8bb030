package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConfigPrecedence: a flag beats its E2B_* variable, which beats the
// login file; without a domain, sandbox traffic goes to the server URL.
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WARREN_CONFIG", filepath.Join(dir, "sub", "config.json"))
	for _, k := range []string{"E2B_API_URL", "E2B_API_KEY", "E2B_SANDBOX_URL", "E2B_DOMAIN"} {
		t.Setenv(k, "")
	}
	if _, err := (&connFlags{}).config(); err == nil {
		t.Fatal("no key and no login: no error")
	}
	p, err := saveConfig(cliConfig{APIURL: "http://file:1", APIKey: "e2b_file"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config mode: %v, %v", st, err)
	}
	for _, tc := range []struct {
		name              string
		flags             connFlags
		env               map[string]string
		url, key, sandbox string
	}{
		{name: "file", url: "http://file:1", key: "e2b_file", sandbox: "http://file:1"},
		{name: "env", env: map[string]string{"E2B_API_KEY": "e2b_env", "E2B_API_URL": "http://env:2"}, url: "http://env:2", key: "e2b_env", sandbox: "http://env:2"},
		{name: "flag", flags: connFlags{apiKey: "e2b_flag", sandboxURL: "http://sb:3"}, env: map[string]string{"E2B_API_KEY": "e2b_env"},
			url: "http://file:1", key: "e2b_flag", sandbox: "http://sb:3"},
		{name: "domain", env: map[string]string{"E2B_DOMAIN": "sandboxes.example"}, url: "http://file:1", key: "e2b_file", sandbox: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := tc.flags.config()
			if err != nil || cfg.APIURL != tc.url || cfg.APIKey != tc.key || cfg.SandboxURL != tc.sandbox {
				t.Errorf("config = %+v, %v", cfg, err)
			}
		})
	}
	if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (&connFlags{}).config(); err == nil {
		t.Error("a broken config file gave no error")
	}
}

func TestSplitRemote(t *testing.T) {
	for _, tc := range []struct{ arg, id, path string }{
		{"abc123:/tmp/x", "abc123", "/tmp/x"},
		{"abc123:", "abc123", ""},
		{"./a:b", "", "./a:b"},
		{"/tmp/a:b", "", "/tmp/a:b"},
		{"file.txt", "", "file.txt"},
		{"-", "", "-"},
		{":x", "", ":x"},
	} {
		if id, p := splitRemote(tc.arg); id != tc.id || p != tc.path {
			t.Errorf("splitRemote(%q) = %q, %q", tc.arg, id, p)
		}
	}
}
