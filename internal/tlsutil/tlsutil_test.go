package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

func TestEnsureServesWildcard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := Ensure(dir, "sbx.test")
	if err != nil {
		t.Fatal(err)
	}
	caBefore, _ := os.ReadFile(f.CACert)
	if _, err := Ensure(dir, "sbx.test"); err != nil {
		t.Fatal(err)
	}
	if caAfter, _ := os.ReadFile(f.CACert); string(caAfter) != string(caBefore) {
		t.Fatal("a second Ensure must keep the CA")
	}
	cfg, err := Config(f)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.Proto))
	}))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caBefore)
	for _, host := range []string{"49983-abc.sbx.test", "sbx.test"} {
		t.Run(host, func(t *testing.T) {
			client := &http.Client{Transport: &http.Transport{
				TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: host},
				ForceAttemptHTTP2: true,
			}}
			resp, err := client.Get("https://" + srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.ProtoMajor != 2 {
				t.Fatalf("proto = %s, want HTTP/2", resp.Proto)
			}
		})
	}
}

func TestEnsureRenewsForNewDomain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Ensure(dir, "one.test"); err != nil {
		t.Fatal(err)
	}
	f, err := Ensure(dir, "two.test")
	if err != nil {
		t.Fatal(err)
	}
	leaf, _, err := loadPair(f.ServerCert, f.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	if !covers(leaf, []string{"*.two.test"}) {
		t.Fatalf("certificate names %v do not cover *.two.test", leaf.DNSNames)
	}
}
