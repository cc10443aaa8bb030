package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLSHostRouting serves HTTPS with the CA and wildcard certificate warren
// makes, and reaches both the API and a sandbox's envd by Host name
// (`49983-<id>.<domain>`), as SDKs without E2B_SANDBOX_URL do; the names
// resolve to the server through the test's own dialer, not DNS.
func TestTLSHostRouting(t *testing.T) {
	cfg := loadConfig(t)
	cfg.domain = "warren.test"
	s := launchServer(t, cfg, serverOpts{index: 40, runtime: cfg.runtimes[0], tls: true})
	ca, err := os.ReadFile(filepath.Join(s.dataDir, "tls", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("ca.pem holds no certificate")
	}
	addr := strings.TrimPrefix(s.url, "https://")
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	_, port, _ := net.SplitHostPort(addr)

	get := func(url string, header map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}
	res, _ := get("https://api.warren.test:"+port+"/health", nil)
	if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 {
		t.Fatalf("API over TLS: %s %s; want 200 over HTTP/2", res.Proto, res.Status)
	}
	res, body := get("https://api.warren.test:"+port+"/v2/sandboxes", nil)
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("list without key: %d %s", res.StatusCode, body)
	}
	res, body = get("https://api.warren.test:"+port+"/sandboxes", map[string]string{"X-API-KEY": s.apiKey})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("list: %d %s", res.StatusCode, body)
	}

	created := s.createSandboxTLS(t, client, port)
	res, body = get("https://49983-"+created+".warren.test:"+port+"/health", nil)
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("envd by Host over TLS: %d %s", res.StatusCode, body)
	}
	req, _ := http.NewRequest("DELETE", "https://api.warren.test:"+port+"/sandboxes/"+created, nil)
	req.Header.Set("X-API-KEY", s.apiKey)
	if res, err := client.Do(req); err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %v %v", err, res)
	}
}

func (s *server) createSandboxTLS(t *testing.T, client *http.Client, port string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", "https://api.warren.test:"+port+"/v2/sandboxes", strings.NewReader(`{"templateID":"base"}`))
	req.Header.Set("X-API-KEY", s.apiKey)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var sb struct {
		SandboxID string `json:"sandboxID"`
		Domain    string `json:"domain"`
	}
	if err := json.NewDecoder(res.Body).Decode(&sb); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create over TLS: %d %v", res.StatusCode, err)
	}
	if sb.Domain != "warren.test" {
		t.Fatalf("domain = %q, want warren.test", sb.Domain)
	}
	return sb.SandboxID
}
