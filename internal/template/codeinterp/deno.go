package codeinterp

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/template/aptlayer"
)

// denoPin is one exact npm tarball of the Deno binary. The deno package on
// npm is a launcher whose optionalDependencies carry one binary per
// platform; we fetch the platform package directly. Integrity is npm's
// dist.integrity (`npm view <pkg>@<ver> dist.integrity`), checked here
// ourselves, so neither the registry nor npm's cache is trusted.
type denoPin struct {
	Package   string
	Version   string
	Integrity string
}

// denoBinary is where Deno goes in the rootfs.
const denoBinary = "/usr/local/bin/deno"

// denoPins maps GOARCH to its pin. Upgrading Deno is editing this table
// (and the recipe hash follows).
var denoPins = map[string]denoPin{
	"amd64": {
		Package:   "@deno/linux-x64-glibc",
		Version:   "2.9.6",
		Integrity: "sha512-3md4TKLCuzsLDmfOoC5KN7NAZaxSVkMgm64vg6foD00JBADCpYS2/5QqXfzgnP5ZQz3iLP9vBQJtEgc116OAoQ==",
	},
}

// goarch is runtime.GOARCH; a variable so tests can pretend otherwise.
var goarch = runtime.GOARCH

func denoPinFor(arch string) (denoPin, error) {
	pin, ok := denoPins[arch]
	if !ok {
		return denoPin{}, errdefs.New(errdefs.ErrFailedPrecondition, "no pinned Deno build for "+arch)
	}
	return pin, nil
}

// tarballName is the file name `npm pack` gives pin's package.
func (p denoPin) tarballName() string {
	name := strings.ReplaceAll(strings.TrimPrefix(p.Package, "@"), "/", "-")
	return name + "-" + p.Version + ".tgz"
}

// installDeno fetches (or reuses) pin's verified tarball, writes its binary
// into rootfs and checks that it runs there. It returns the version line.
func installDeno(ctx context.Context, pin denoPin, npmDir, rootfs string) (string, error) {
	if pin.Package == "" {
		return "", errdefs.New(errdefs.ErrFailedPrecondition, "no pinned Deno build for "+goarch)
	}
	tgz, err := fetchDeno(ctx, pin, npmDir)
	if err != nil {
		return "", err
	}
	if err := extractDeno(tgz, rootfs); err != nil {
		return "", err
	}
	return checkDeno(ctx, rootfs, pin.Version)
}

// fetchDeno returns the path of pin's tarball in dir, running `npm pack`
// only when no verified copy is there yet.
func fetchDeno(ctx context.Context, pin denoPin, dir string) (string, error) {
	final := filepath.Join(dir, pin.tarballName())
	if verifyIntegrity(final, pin.Integrity) == nil {
		return final, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating npm cache: %w", err)
	}
	work, err := os.MkdirTemp(dir, "pack-")
	if err != nil {
		return "", fmt.Errorf("creating npm work dir: %w", err)
	}
	defer os.RemoveAll(work)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	// npm keeps the host's environment: its registry, proxy and cache
	// settings live in ~/.npmrc and npm_config_* variables.
	cmd := exec.CommandContext(ctx, "npm", "pack", "--silent", pin.Package+"@"+pin.Version)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm pack %s@%s: %w\n%s", pin.Package, pin.Version, err, aptlayer.Tail(out, 2000))
	}
	got := filepath.Join(work, pin.tarballName())
	if err := verifyIntegrity(got, pin.Integrity); err != nil {
		return "", err
	}
	if err := os.Rename(got, final); err != nil {
		return "", fmt.Errorf("saving Deno tarball: %w", err)
	}
	return final, nil
}

// verifyIntegrity checks file against an npm integrity string
// ("sha512-<base64>").
func verifyIntegrity(file, integrity string) error {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("unsupported integrity %q: want sha512", integrity)
	}
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", file, err)
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("verifying %s: %w", file, err)
	}
	if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: integrity sha512-%s, want %s", file, got, integrity)
	}
	return nil
}

// extractDeno copies package/deno out of the tarball to denoBinary.
func extractDeno(tgz, rootfs string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return fmt.Errorf("opening Deno tarball: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("reading Deno tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s has no package/deno", tgz)
		}
		if err != nil {
			return fmt.Errorf("reading Deno tarball: %w", err)
		}
		if h.Name == "package/deno" && h.Typeflag == tar.TypeReg {
			return writeRootFile(rootfs, strings.TrimPrefix(denoBinary, "/"), tr, 0o755)
		}
	}
}

// writeRootFile streams r to name inside rootfs, through an os.Root so a
// symlink in the tree cannot redirect the write to the host.
func writeRootFile(rootfs, name string, r io.Reader, mode os.FileMode) error {
	root, err := os.OpenRoot(rootfs)
	if err != nil {
		return fmt.Errorf("opening rootfs: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("creating /%s: %w", filepath.Dir(name), err)
	}
	if err := root.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("replacing /%s: %w", name, err)
	}
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("writing /%s: %w", name, err)
	}
	_, cerr := io.Copy(out, r)
	if err := errors.Join(cerr, out.Close(), root.Chmod(name, mode)); err != nil {
		return fmt.Errorf("writing /%s: %w", name, err)
	}
	return nil
}

// checkDeno runs `deno --version` in the chroot: it proves the binary
// works against the rootfs's glibc, not just the host's.
func checkDeno(ctx context.Context, rootfs, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "chroot", rootfs, denoBinary, "--version")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "DENO_NO_UPDATE_CHECK=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("running deno --version in the rootfs: %w\n%s", err, aptlayer.Tail(out, 2000))
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if !strings.HasPrefix(first, "deno "+version+" ") {
		return "", fmt.Errorf("deno --version in the rootfs says %q, want deno %s", first, version)
	}
	return first, nil
}
