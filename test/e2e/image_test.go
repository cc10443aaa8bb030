package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/warren-sandbox/warren/internal/selftest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// busyboxImage is a small OCI image made from Debian's static busybox:
// three layers, the last deleting a file the second added (a whiteout),
// and an environment variable in its config.
func busyboxImage(t *testing.T) v1.Image {
	t.Helper()
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Skipf("needs Debian's busybox-static (scripts/setup.sh installs it): %v", err)
	}
	base := []tarEntry{{name: "bin/", dir: true}, {name: "bin/busybox", data: bb, mode: 0o755},
		{name: "etc/", dir: true}, {name: "etc/passwd", data: []byte("root:x:0:0:root:/root:/bin/sh\n")},
		{name: "etc/group", data: []byte("root:x:0:\n")}, {name: "root/", dir: true}, {name: "tmp/", dir: true, mode: 0o1777}}
	for _, tool := range []string{"sh", "ls", "cat", "echo", "id", "touch", "mkdir", "sleep", "test", "env", "whoami", "stat", "pwd", "true"} {
		base = append(base, tarEntry{name: "bin/" + tool, link: "busybox"})
	}
	img := empty.Image
	for _, entries := range [][]tarEntry{base,
		{{name: "etc/motd", data: []byte("gone\n")}, {name: "etc/keep", data: []byte("kept\n")}},
		{{name: "etc/.wh.motd"}},
	} {
		layer, err := tarball.LayerFromOpener(tarOpener(t, entries))
		if err != nil {
			t.Fatal(err)
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			t.Fatal(err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf.Config.Env = []string{"PATH=/bin", "FROM_IMAGE=yes"}
	cf.OS, cf.Architecture = "linux", "amd64"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

type tarEntry struct {
	name, link string
	data       []byte
	dir        bool
	mode       int64
}

func tarOpener(t *testing.T, entries []tarEntry) tarball.Opener {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.data)), Typeflag: tar.TypeReg, ModTime: time.Unix(1700000000, 0)}
		switch {
		case e.dir:
			h.Typeflag, h.Size = tar.TypeDir, 0
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if e.dir {
				h.Mode = 0o755
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(e.data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}

// authRegistry is an in-memory registry on loopback that wants one user.
func authRegistry(t *testing.T, user, pass string) string {
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// buildTemplate runs a build through the REST API and returns its final
// status.
func (s *server) buildTemplate(t *testing.T, name string, req map[string]any) map[string]any {
	t.Helper()
	var rb struct{ TemplateID, BuildID string }
	if err := json.Unmarshal(s.mustCall(t, "POST", "/v3/templates", fmt.Sprintf(`{"name":%q}`, name), 202), &rb); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(req)
	s.mustCall(t, "POST", "/v2/templates/"+rb.TemplateID+"/builds/"+rb.BuildID, string(body), 202)
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		var st map[string]any
		_ = json.Unmarshal(s.mustCall(t, "GET", "/templates/"+rb.TemplateID+"/builds/"+rb.BuildID+"/status", "", 200), &st)
		if st["status"] == "ready" || st["status"] == "error" {
			return st
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("build of %s did not finish", name)
	return nil
}

func reason(st map[string]any) string {
	r, _ := st["reason"].(map[string]any)
	m, _ := r["message"].(string)
	return m
}

func TestImages(t *testing.T) {
	cfg := loadConfig(t)
	ecr := testutil.ECRKeys{AccessKeyID: "AKIDE2E", SecretAccessKey: "aws-secret-e2e", Region: "us-west-2", User: "AWS", Password: "ecr-pass-e2e"}
	// The registries and the cloud login endpoint are on loopback, which
	// pulls may reach only when the operator allows it.
	s := launchServer(t, cfg, serverOpts{index: 80, runtime: cfg.runtimes[0], args: []string{"--registry-allow", "127.0.0.0/8"},
		env: []string{"AWS_ENDPOINT_URL_ECR=" + testutil.FakeECR(t, ecr)}})
	img := busyboxImage(t)
	host := authRegistry(t, "alice", "s3cret")
	ref := host + "/tools/busybox:1"
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img, remote.WithAuth(&authn.Basic{Username: "alice", Password: "s3cret"})); err != nil {
		t.Fatal(err)
	}
	creds := map[string]any{"type": "registry", "username": "alice", "password": "s3cret"}
	run := []map[string]any{{"type": "RUN", "args": []string{"echo built > /tmp/built; whoami > /tmp/builder"}}}

	t.Run("pull with credentials", func(t *testing.T) {
		st := s.buildTemplate(t, "bb-pulled", map[string]any{"fromImage": ref, "fromImageRegistry": creds, "steps": run, "startCmd": "sleep 600"})
		if st["status"] != "ready" {
			t.Fatalf("build failed: %s", reason(st))
		}
		out := runIn(t, s, "bb-pulled", "cat /tmp/built /tmp/builder; echo $FROM_IMAGE; cat /etc/keep; test -e /etc/motd || echo motd-deleted; whoami")
		if want := "built\nuser\nyes\nkept\nmotd-deleted\nuser\n"; out != want {
			t.Fatalf("sandbox from the pulled image printed %q, want %q", out, want)
		}
	})
	t.Run("cloud registry logins", func(t *testing.T) { testCloudLogins(t, s, img, ecr) })
	t.Run("refused credentials", func(t *testing.T) {
		bad := map[string]any{"type": "registry", "username": "alice", "password": "wrong"}
		st := s.buildTemplate(t, "bb-badcreds", map[string]any{"fromImage": ref, "fromImageRegistry": bad, "steps": run})
		if st["status"] != "error" || !strings.Contains(reason(st), "denied") && !strings.Contains(reason(st), "credentials") {
			t.Fatalf("status %v, reason %q: want an error about the credentials", st["status"], reason(st))
		}
	})
	t.Run("missing image", func(t *testing.T) {
		st := s.buildTemplate(t, "bb-missing", map[string]any{"fromImage": host + "/tools/nothing:1", "fromImageRegistry": creds, "steps": run})
		if st["status"] != "error" || !strings.Contains(reason(st), "nothing") {
			t.Fatalf("status %v, reason %q: want an error naming the image", st["status"], reason(st))
		}
	})
	t.Run("import an OCI layout with the CLI", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "layout")
		p, err := layout.Write(dir, empty.Index)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "local/busybox:layout"})); err != nil {
			t.Fatal(err)
		}
		out, err := warrenCLI(t, cfg, s, t.TempDir(), "image", "import", dir)
		if err != nil || !strings.Contains(out, "local/busybox:layout") {
			t.Fatalf("warren image import: %v\n%s", err, out)
		}
		if out, err := warrenCLI(t, cfg, s, t.TempDir(), "image", "list"); err != nil || !strings.Contains(out, "local/busybox:layout") {
			t.Fatalf("warren image list: %v\n%s", err, out)
		}
		res := s.buildTemplate(t, "bb-layout", map[string]any{"fromImage": "local/busybox:layout", "steps": run})
		if res["status"] != "ready" {
			t.Fatalf("build failed: %s", reason(res))
		}
	})
	t.Run("import a docker save tarball", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bb.tar")
		tag, _ := name.NewTag("local/busybox:imported")
		if err := tarball.WriteToFile(path, tag, img); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		st, body := s.call(t, "POST", "/images", string(data))
		if st != 201 || !strings.Contains(string(body), "local/busybox:imported") {
			t.Fatalf("POST /images: %d %s", st, body)
		}
		res := s.buildTemplate(t, "bb-imported", map[string]any{"fromImage": "local/busybox:imported", "steps": run})
		if res["status"] != "ready" {
			t.Fatalf("build failed: %s", reason(res))
		}
		if out := runIn(t, s, "bb-imported", "cat /tmp/built"); out != "built\n" {
			t.Fatalf("got %q", out)
		}
	})
}

// testCloudLogins pulls img from registries that want a Google service
// account key and an ECR login (which the server gets from a stand-in for
// ECR's API with AWS keys), as the SDK's fromGCPRegistry and
// fromAWSRegistry send them, and checks that no secret is kept in the
// server's data dir.
func testCloudLogins(t *testing.T, s *server, img v1.Image, ecr testutil.ECRKeys) {
	gcpKey := `{"type":"service_account","client_email":"e2e@p.iam.gserviceaccount.com","private_key":"gcp-secret-e2e"}`
	gcpHost := authRegistry(t, "_json_key", gcpKey)
	ecrHost := authRegistry(t, ecr.User, ecr.Password)
	for host, a := range map[string]authn.Authenticator{
		gcpHost: &authn.Basic{Username: "_json_key", Password: gcpKey},
		ecrHost: &authn.Basic{Username: ecr.User, Password: ecr.Password},
	} {
		r, _ := name.ParseReference(host+"/cloud/busybox:1", name.Insecure)
		if err := remote.Write(r, img, remote.WithAuth(a)); err != nil {
			t.Fatal(err)
		}
	}
	aws := func(secret string) map[string]any {
		return map[string]any{"type": "aws", "awsAccessKeyId": ecr.AccessKeyID, "awsSecretAccessKey": secret, "awsRegion": ecr.Region}
	}
	for _, tc := range []struct {
		name, host string
		auth       map[string]any
		fails      string
	}{
		{"bb-gcp", gcpHost, map[string]any{"type": "gcp", "serviceAccountJson": gcpKey}, ""},
		{"bb-ecr", ecrHost, aws(ecr.SecretAccessKey), ""},
		{"bb-ecr-badkey", ecrHost, aws("not-the-secret"), "ECR refused the AWS keys"},
	} {
		st := s.buildTemplate(t, tc.name, map[string]any{"fromImage": tc.host + "/cloud/busybox:1", "fromImageRegistry": tc.auth, "steps": []any{}})
		if tc.fails == "" && st["status"] != "ready" || tc.fails != "" && (st["status"] != "error" || !strings.Contains(reason(st), tc.fails)) {
			t.Errorf("%s: status %v, reason %q", tc.name, st["status"], reason(st))
		}
	}
	if out := runIn(t, s, "bb-ecr", "cat /etc/keep"); out != "kept\n" {
		t.Errorf("sandbox from the ECR image: %q", out)
	}
	entries, _ := os.ReadDir(s.dataDir)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(s.dataDir, e.Name()))
		if err != nil {
			continue // a directory
		}
		for _, secret := range []string{"gcp-secret-e2e", ecr.SecretAccessKey, "s3cret"} {
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds the secret %q", e.Name(), secret)
			}
		}
	}
}

// runIn creates a sandbox from template, runs script as the default user
// and kills the sandbox.
func runIn(t *testing.T, s *server, template, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{}}
	sb, err := c.Create(ctx, template, nil)
	if err != nil {
		t.Fatalf("creating a sandbox from %s: %v", template, err)
	}
	defer sb.Kill(context.WithoutCancel(ctx))
	sb.Shell = "/bin/sh"
	res, err := sb.Run(ctx, "", script)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("%s: %v", script, res)
	}
	return res.Stdout
}
