package codeinterp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgressLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgress(&buf)
	for _, l := range []string{
		"Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]",
		"Setting up warren-pythran-stub (1.0) ...",
		"Get:3 http://deb.debian.org/debian bookworm/main amd64 python3-numpy amd64 1:1.24.2-1 [6000 kB]",
		"E: Unable to locate package nope",
	} {
		observe(p, l)
	}
	p.Beat()
	got := buf.String()
	for _, want := range []string{
		"code-interpreter: apt: fetching package lists... (step 2/8)\n",
		"code-interpreter: apt: downloading packages... (step 3/8)\n",
		"code-interpreter: apt: E: Unable to locate package nope\n",
		"1 packages so far (latest python3-numpy)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "configuring packages") {
		t.Errorf("the stub's \"Setting up\" moved the display on:\n%s", got)
	}
}

func TestVerifyIntegrity(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "x.tgz")
	if err := os.WriteFile(f, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// `printf "hello\n" | sha512sum`, in base64 as npm writes it.
	good := "sha512-58IrmUxZ2c8rSOVJseJGZmNgRZMNPafBrLKZ0cO3+TH5Sq5B7dosKyB6NuEPi8uNRSI+VIePWzFufOO2vAGWKQ=="
	if err := verifyIntegrity(f, good); err != nil {
		t.Errorf("good integrity: %v", err)
	}
	for _, bad := range []string{"sha512-AAAA", "sha1-abc", ""} {
		if err := verifyIntegrity(f, bad); err == nil {
			t.Errorf("integrity %q accepted", bad)
		}
	}
}

func TestDenoPin(t *testing.T) {
	t.Parallel()
	pin, err := denoPinFor("amd64")
	if err != nil {
		t.Fatal(err)
	}
	if got := pin.tarballName(); got != "deno-linux-x64-glibc-"+pin.Version+".tgz" {
		t.Errorf("tarballName = %q", got)
	}
	if _, err := denoPinFor("riscv64"); err == nil {
		t.Error("riscv64 has no pin but got one")
	}
}
