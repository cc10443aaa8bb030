package aptlayer

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestStepOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line string
		step int
		item string
	}{
		{"Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]", StepLists, ""},
		{"Get:2 http://deb.debian.org/debian bookworm/main amd64 Packages [8787 kB]", StepLists, ""},
		{"Hit:1 http://deb.debian.org/debian bookworm InRelease", StepLists, ""},
		{"Get:3 http://deb.debian.org/debian bookworm/main amd64 python3-numpy amd64 1:1.24.2-1 [6000 kB]", StepDownload, "python3-numpy"},
		{"Unpacking python3-numpy (1:1.24.2-1) ...", StepUnpack, "python3-numpy"},
		{"Unpacking libc6:amd64 (2.36-9) ...", StepUnpack, "libc6"},
		{"Setting up python3-scipy (1.10.1-2) ...", StepSetup, "python3-scipy"},
		{"Reading package lists...", 0, ""},
		{"", 0, ""},
	}
	for _, c := range cases {
		step, item := StepOf(c.line)
		if step != c.step || item != c.item {
			t.Errorf("StepOf(%q) = %d, %q; want %d, %q", c.line, step, item, c.step, c.item)
		}
	}
}

func TestNewProgressNumbersExtraSteps(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := NewProgress(&buf, "tpl", map[int]string{NextStep: "configuring", NextStep + 1: "saving"})
	p.Observe("Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]")
	p.Enter(NextStep + 1)
	got := buf.String()
	for _, want := range []string{
		"tpl: apt: fetching package lists... (step 2/7)\n",
		"tpl: saving... (step 7/7)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output lacks %q:\n%s", want, got)
		}
	}
}

func TestPruneDebCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := []string{
		"python3-numpy_1%3a1.24.2-1_amd64.deb", // installed, epoch escaped
		"python3-numpy_1%3a1.24.1-1_amd64.deb", // older version
		"python3-gone_1.0_all.deb",             // no longer installed
		"warren-pythran-stub_1.0_all.deb",
		"lock",
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "partial"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := PruneDebCache(dir, []string{"python3-numpy=1:1.24.2-1", "warren-pythran-stub=1.0"})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"lock", "partial", "python3-numpy_1%3a1.24.2-1_amd64.deb", "warren-pythran-stub_1.0_all.deb"}
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

func TestLocalDebNamesChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "a b.deb", "../x.deb", "x\n.deb"} {
		l := Layer{Debs: t.TempDir(), Lists: t.TempDir(), LocalDebs: []string{bad}}
		if err := l.apt(t.Context()); err == nil || !strings.Contains(err.Error(), "plain file name") {
			t.Errorf("LocalDebs %q: err = %v, want a plain-file-name error", bad, err)
		}
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		out  string
		n    int
		want string
	}{
		{"  short\n", 100, "short"},
		{"0123456789\n", 4, "6789"},
		{"", 4, ""},
	}
	for _, c := range cases {
		if got := Tail([]byte(c.out), c.n); got != c.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", c.out, c.n, got, c.want)
		}
	}
}
