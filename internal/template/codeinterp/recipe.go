package codeinterp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// ConfigVersion is the revision of how this package builds the tree
// (copy, apt, the pythran stub, trimming). The files it writes are hashed by content, so
// editing them needs no bump; changing the build steps does.
const ConfigVersion = 3

// Packages is what the template installs on top of base, with apt and
// without Recommends (base's apt.conf.d sets that). Chosen for what a data
// analysis agent imports; all are in bookworm/main. python3-matplotlib
// depends on python3-pil.imagetk and so on Tk and some X11 libraries; that
// is a hard dependency, not a recommend, so it stays. python3-scipy's hard
// dependency on the Pythran compiler (g++, python3-dev, Boost headers) is
// satisfied by a stub package instead; see stub.go. python3-fonttools, a
// matplotlib dependency, brings python3-sympy.
//
// r-base-core and r-cran-irkernel give R its kernel, as upstream's
// template has one; they bring R's runtime and the IRkernel's R packages
// (ZeroMQ bindings, repr, evaluate), not R's compilers (r-base-dev).
//
// default-jdk-headless (OpenJDK 17) runs the Java kernel and compiles its
// JShell program at build time (see JavaKernel); IJava is not packaged.
//
// Not here: bash_kernel (not packaged in bookworm: see BashKernel), and
// any -dev package or compiler.
var Packages = []string{
	"default-jdk-headless",
	"python3-bs4",
	"python3-ipykernel",
	"python3-lxml",
	"python3-matplotlib",
	"python3-numpy",
	"python3-openpyxl",
	"python3-pandas",
	"python3-pil",
	"python3-requests",
	"python3-scipy",
	"python3-seaborn",
	"r-base-core",
	"r-cran-irkernel",
}

// recipe is everything that decides the content of a built rootfs.
type recipe struct {
	BaseRecipe    string   // base template's recipe hash
	Packages      []string // sorted, unique
	ConfigVersion int
	Deno          denoPin
	Files         string // digest of every file writeConfig writes
}

func newRecipe(baseRecipe string, packages []string) (recipe, error) {
	pkgs := slices.Clone(packages)
	slices.Sort(pkgs)
	files, err := configFiles(true)
	if err != nil {
		return recipe{}, err
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %o %d\n", f.name, f.mode, len(f.data))
		h.Write(f.data)
	}
	pin, _ := denoPinFor(goarch) // no pin: the zero pin, and no Deno
	return recipe{
		BaseRecipe:    baseRecipe,
		Packages:      slices.Compact(pkgs),
		ConfigVersion: ConfigVersion,
		Deno:          pin,
		Files:         hex.EncodeToString(h.Sum(nil)),
	}, nil
}

// hash names the recipe in the cache: 16 hex characters of a SHA-256 over
// a canonical text form.
func (r recipe) hash() string {
	text := fmt.Sprintf("base=%s\nconfig=%d\npackages=%s\ndeno=%s@%s %s\nfiles=%s\n",
		r.BaseRecipe, r.ConfigVersion, strings.Join(r.Packages, ","),
		r.Deno.Package, r.Deno.Version, r.Deno.Integrity, r.Files)
	return cachedfs.Hash(text)
}
