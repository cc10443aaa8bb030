package builder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

func TestValidate(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	tests := []struct {
		name string
		req  wire.BuildStart
		want string // substring of the error; "" = valid
	}{
		{"sdk request", wire.BuildStart{FromTemplate: "base", Steps: []wire.Step{
			{Type: wire.StepEnv, Args: []string{"A", "1"}}, {Type: wire.StepRun, Args: []string{"true", "root"}},
			{Type: wire.StepCopy, Args: []string{"app", "/app", "", "0755"}, FilesHash: hash},
			{Type: wire.StepWorkdir, Args: []string{"/app"}}, {Type: wire.StepUser, Args: []string{"user"}},
		}}, ""},
		{"unknown step", wire.BuildStart{Steps: []wire.Step{{Type: "FROB", Args: []string{"x"}}}}, "unknown step type"},
		{"odd env", wire.BuildStart{Steps: []wire.Step{{Type: wire.StepEnv, Args: []string{"A"}}}}, "ENV takes"},
		{"empty run", wire.BuildStart{Steps: []wire.Step{{Type: wire.StepRun, Args: []string{"  "}}}}, "empty command"},
		{"copy outside context", wire.BuildStart{Steps: []wire.Step{{Type: wire.StepCopy, Args: []string{"../x", "/x"}, FilesHash: hash}}}, "outside the build context"},
		{"copy absolute", wire.BuildStart{Steps: []wire.Step{{Type: wire.StepCopy, Args: []string{"/etc/passwd", "/x"}, FilesHash: hash}}}, "outside the build context"},
		{"copy without hash", wire.BuildStart{Steps: []wire.Step{{Type: wire.StepCopy, Args: []string{"a", "/x"}}}}, "filesHash"},
		{"copy bad mode", wire.BuildStart{Steps: []wire.Step{{Type: wire.StepCopy, Args: []string{"a", "/x", "", "9z"}, FilesHash: hash}}}, "not octal"},
		{"two sources", wire.BuildStart{FromImage: "x", FromTemplate: "y"}, "only one of"},
		{"unknown stage", wire.BuildStart{FromStage: "build"}, "not an earlier stage"},
		{"copy from unknown stage", wire.BuildStart{Steps: []wire.Step{{Type: wire.StepCopy, Args: []string{"a", "/x"}, FromStage: "b"}}}, "names no earlier stage"},
		{"stages", wire.BuildStart{Stages: []wire.Stage{{Name: "b", FromTemplate: "base"}}, FromStage: "b",
			Steps: []wire.Step{{Type: wire.StepCopy, Args: []string{"/out", "/x"}, FromStage: "b"}}}, ""},
		{"duplicate stage", wire.BuildStart{Stages: []wire.Stage{{Name: "b"}, {Name: "b"}}}, "unique"},
		{"aws registry", wire.BuildStart{FromImage: "x", FromImageRegistry: &wire.RegistryAuth{Type: "aws", AWSAccessKeyID: "a", AWSSecretAccessKey: "s", AWSRegion: "us-east-1"}}, ""},
		{"aws without keys", wire.BuildStart{FromImage: "x", FromImageRegistry: &wire.RegistryAuth{Type: "aws"}}, "needs awsAccessKeyId"},
		{"gcp registry", wire.BuildStart{FromImage: "x", FromImageRegistry: &wire.RegistryAuth{Type: "gcp", ServiceAccountJSON: "{}"}}, ""},
		{"gcp without key", wire.BuildStart{FromImage: "x", FromImageRegistry: &wire.RegistryAuth{Type: "gcp"}}, "needs serviceAccountJson"},
		{"stage with bad auth", wire.BuildStart{Stages: []wire.Stage{{Name: "b", FromImage: "x", FromImageRegistry: &wire.RegistryAuth{Type: "azure"}}}}, `type "azure" is not supported`},
		{"dockerfile line", wire.BuildStart{Steps: []wire.Step{{Type: wire.StepRun, Args: []string{""}, Line: 7}}}, "Dockerfile:7"},
	}
	b := &Builder{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := b.validate(&tc.req)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errdefs.IsInvalidArgument(err) {
				t.Fatalf("validate = %v, want an invalid-argument error with %q", err, tc.want)
			}
		})
	}
}

func TestChainDependsOnEveryPart(t *testing.T) {
	a := chain("p", "RUN", []string{"x"})
	for _, other := range []string{chain("q", "RUN", []string{"x"}), chain("p", "RUN", []string{"y"}), chain("p", "COPY", []string{"x"})} {
		if other == a {
			t.Fatal("different steps share a key")
		}
	}
	if chain("p", "RUN", []string{"x"}) != a {
		t.Fatal("the same step gives another key")
	}
}

// TestCopyMapping follows Docker's COPY rules against an image with
// /bin -> usr/bin and an existing /srv directory.
func TestCopyMapping(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"usr/bin", "srv"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("usr/bin", filepath.Join(root, "bin")); err != nil {
		t.Fatal(err)
	}
	v := &view{root: root}
	tree := []entry{{"app", true}, {"app/main.py", false}, {"app/lib", true}, {"app/lib/x.py", false}, {"tool", false}, {"a.txt", false}, {"b.txt", false}}
	tests := []struct {
		src, dest string
		want      map[string]string // source name -> in-image target ("" = skipped)
	}{
		{"app", "/opt/app", map[string]string{"app": "", "app/main.py": "/opt/app/main.py", "app/lib/x.py": "/opt/app/lib/x.py", "tool": ""}},
		{"tool", "/bin/", map[string]string{"tool": "/usr/bin/tool", "app/main.py": ""}},
		{"tool", "/bin/renamed", map[string]string{"tool": "/usr/bin/renamed"}},
		{"tool", "/srv", map[string]string{"tool": "/srv/tool"}},
		{"*.txt", "/docs", map[string]string{"a.txt": "/docs/a.txt", "b.txt": "/docs/b.txt", "tool": ""}},
		{".", "/ctx/", map[string]string{"app/main.py": "/ctx/app/main.py", "tool": "/ctx/tool"}},
		{"./app/", "/x", map[string]string{"app/lib/x.py": "/x/lib/x.py"}},
	}
	for _, tc := range tests {
		t.Run(tc.src+"->"+tc.dest, func(t *testing.T) {
			m, err := newCopyMapping(tc.src, tree, v, tc.dest)
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tc.want {
				if got := m.target(name); got != want {
					t.Errorf("target(%q) = %q, want %q", name, got, want)
				}
			}
		})
	}
	if _, err := newCopyMapping("missing", tree, v, "/x"); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("a source that matches nothing: %v", err)
	}
}

func TestResolveStaysInTheImage(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(root, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../..", filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	v := &view{root: root}
	for in, want := range map[string]string{"/evil/passwd": "/etc/passwd", "/up/tmp/x": "/tmp/x", "/new/dir": "/new/dir"} {
		got, err := v.resolve(in)
		if err != nil || got != want {
			t.Errorf("resolve(%q) = %q, %v; want %q (inside the image)", in, got, err, want)
		}
	}
}

func TestAccountHelpers(t *testing.T) {
	passwd := []byte("root:x:0:0::/root:/bin/bash\nnode:x:1000:1000::/home/node:/bin/sh\n")
	if hasEntry(passwd, "user") || !hasEntry(passwd, "node") {
		t.Fatal("hasEntry")
	}
	if got := freeID(passwd, 1000); got != 1001 {
		t.Fatalf("freeID = %d, want 1001", got)
	}
	if got := string(appendLine([]byte("a"), "b")); got != "a\nb\n" {
		t.Fatalf("appendLine = %q", got)
	}
}

func TestLogSplitsLinesAndBoundsThem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	l, err := newLog(path)
	if err != nil {
		t.Fatal(err)
	}
	w := l.writer("2")
	_, _ = w.Write([]byte("one\ntw"))
	_, _ = w.Write([]byte("o\r\n" + strings.Repeat("x", maxLine+5)))
	w.Flush()
	got := l.Entries(0)
	if len(got) != 4 || got[0].Message != "one" || got[1].Message != "two" || len(got[2].Message) != maxLine || got[3].Message != "xxxxx" || got[0].Step != "2" {
		t.Fatalf("entries = %+v", got)
	}
	l.close()
	back, err := readLog(path)
	if err != nil || len(back) != 4 || back[1].Message != "two" {
		t.Fatalf("the log file holds %+v, %v", back, err)
	}
}

// TestLogMemoryBounded: a build that prints a lot keeps only its newest
// lines in memory; older ones are still served, from the file.
func TestLogMemoryBounded(t *testing.T) {
	l, err := newLog(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	line := strings.Repeat("y", 4000)
	const n = 2000 // about 8 MB of output
	for i := range n {
		l.Infof("1", "%d %s", i, line)
	}
	if l.memBytes > maxMemBytes+8<<10 || len(l.entries) >= n {
		t.Fatalf("%d bytes and %d lines in memory; want at most %d bytes", l.memBytes, len(l.entries), maxMemBytes)
	}
	if l.Len() != n {
		t.Fatalf("Len = %d, want %d", l.Len(), n)
	}
	all := l.Entries(0)
	if len(all) != n || !strings.HasPrefix(all[0].Message, "0 ") || !strings.HasPrefix(all[n-1].Message, "1999 ") {
		t.Fatalf("Entries(0) = %d lines", len(all))
	}
	tail := l.Entries(n - 3)
	if len(tail) != 3 || !strings.HasPrefix(tail[2].Message, "1999 ") {
		t.Fatalf("Entries(n-3) = %d lines", len(tail))
	}
	if last := l.Since(0, 15); len(last) != 15 || !strings.HasPrefix(last[14].Message, "1999 ") {
		t.Fatalf("Since = %d lines", len(last))
	}
}

// TestRequestRedacted: the request kept with a build holds no registry
// secret, in the final stage or an earlier one, and the original is intact.
func TestRequestRedacted(t *testing.T) {
	req := &wire.BuildStart{
		FromImage:         "x",
		FromImageRegistry: &wire.RegistryAuth{Type: wire.AuthAWS, AWSAccessKeyID: "AKID", AWSSecretAccessKey: "aws-secret", AWSRegion: "us-east-1"},
		Stages: []wire.Stage{
			{Name: "a", FromImage: "y", FromImageRegistry: &wire.RegistryAuth{Type: wire.AuthRegistry, Username: "u", Password: "reg-secret"}},
			{Name: "b", FromImage: "z", FromImageRegistry: &wire.RegistryAuth{Type: wire.AuthGCP, ServiceAccountJSON: `{"gcp-secret":1}`}},
		},
	}
	data, err := json.Marshal(req.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"aws-secret", "reg-secret", "gcp-secret"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("%s kept in %s", secret, data)
		}
	}
	for _, kept := range []string{"AKID", `"username":"u"`, "us-east-1"} {
		if !strings.Contains(string(data), kept) {
			t.Errorf("%s lost from %s", kept, data)
		}
	}
	if req.FromImageRegistry.AWSSecretAccessKey != "aws-secret" || req.Stages[0].FromImageRegistry.Password != "reg-secret" {
		t.Error("redacting changed the request itself")
	}
}

// TestCollectFiles: uploads older than filesTTL go unless a running build
// reads them; fresh ones stay.
func TestCollectFiles(t *testing.T) {
	dir := t.TempDir()
	b := &Builder{opts: Options{FilesDir: dir}, jobs: map[string]*job{}}
	hash := func(c byte) string { return strings.Repeat(string(c), 64) }
	old := time.Now().Add(-2 * filesTTL)
	for c, mtime := range map[byte]time.Time{'a': old, 'b': old, 'c': time.Now()} {
		p := b.filePath(hash(c))
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	b.jobs["running"] = &job{files: []string{hash('b')}}
	if n := b.CollectFiles(time.Now()); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	for c, want := range map[byte]bool{'a': false, 'b': true, 'c': true} {
		if got := b.HasFiles(hash(c)); got != want {
			t.Errorf("upload %c kept = %v, want %v", c, got, want)
		}
	}
}

// TestTeamFiles: the same upload hash is a different key for each team,
// and the default team is the team of records without one.
func TestTeamFiles(t *testing.T) {
	h := strings.Repeat("ab", 32)
	a, b := TeamFiles("acme", h), TeamFiles("beta", h)
	if a == b || !validHash(a) || !validHash(b) {
		t.Fatalf("keys %s and %s", a, b)
	}
	if TeamFiles("", h) != TeamFiles("default", h) {
		t.Error("the default team's key differs from a team-less record's")
	}
	if TeamFiles("acme", "../x") != "../x" {
		t.Error("an invalid hash must stay invalid")
	}
}
