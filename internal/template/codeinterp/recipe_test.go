package codeinterp

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRecipeHash(t *testing.T) {
	t.Parallel()
	mk := func(baseRecipe string, pkgs ...string) recipe {
		r, err := newRecipe(baseRecipe, pkgs)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ref := mk("b1", "python3-numpy", "python3-pandas").hash()
	bumped := mk("b1", "python3-numpy", "python3-pandas")
	bumped.ConfigVersion++
	newDeno := mk("b1", "python3-numpy", "python3-pandas")
	newDeno.Deno.Version = "9.9.9"
	edited := mk("b1", "python3-numpy", "python3-pandas")
	edited.Files = "other"
	cases := []struct {
		name string
		hash string
		same bool
	}{
		{"order and duplicates ignored", mk("b1", "python3-pandas", "python3-numpy", "python3-numpy").hash(), true},
		{"new base changes it", mk("b2", "python3-numpy", "python3-pandas").hash(), false},
		{"added package changes it", mk("b1", "python3-numpy", "python3-pandas", "python3-scipy").hash(), false},
		{"config version changes it", bumped.hash(), false},
		{"Deno pin changes it", newDeno.hash(), false},
		{"written files change it", edited.hash(), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.hash == ref) != c.same {
				t.Errorf("hash %s vs %s: same=%v, want %v", c.hash, ref, c.hash == ref, c.same)
			}
		})
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(ref) {
		t.Errorf("hash %q is not 16 hex characters", ref)
	}
}

func TestPackages(t *testing.T) {
	t.Parallel()
	if !slices.IsSorted(Packages) {
		t.Error("Packages should stay sorted")
	}
	for _, want := range []string{"python3-ipykernel", "python3-numpy", "python3-pandas", "python3-matplotlib", "python3-scipy"} {
		if !slices.Contains(Packages, want) {
			t.Errorf("Packages lacks %s", want)
		}
	}
	for _, p := range Packages {
		if strings.HasSuffix(p, "-dev") || p == "gcc" || p == "g++" || p == "python3-pythran" {
			t.Errorf("Packages has %s; no compilers or headers", p)
		}
	}
}

func TestKernels(t *testing.T) {
	t.Parallel()
	files, err := configFiles(true)
	if err != nil {
		t.Fatal(err)
	}
	var kernels map[string]Kernel
	for _, f := range files {
		if "/"+f.name == KernelsFile {
			if err := json.Unmarshal(f.data, &kernels); err != nil {
				t.Fatalf("kernels.json: %v\n%s", err, f.data)
			}
		}
	}
	want := map[string]string{
		"python":     "/usr/bin/python3 -m ipykernel_launcher -f {connection_file}",
		"javascript": "/usr/local/bin/deno jupyter --kernel --conn {connection_file}",
		"typescript": "/usr/local/bin/deno jupyter --kernel --conn {connection_file}",
		"bash":       "/usr/bin/python3 /usr/local/lib/warren/python/warren_bash_kernel.py -f {connection_file}",
		"r":          "/usr/bin/R --slave -e IRkernel::main() --args {connection_file}",
		"java":       "/usr/bin/python3 /usr/local/lib/warren/python/warren_java_kernel.py -f {connection_file}",
	}
	if len(kernels) != len(want) {
		t.Errorf("kernels = %v, want %d languages", kernels, len(want))
	}
	for lang, argv := range want {
		k := kernels[lang]
		mode := "signal"
		if strings.HasPrefix(argv, denoBinary) {
			mode = "message" // Deno ignores SIGINT while JavaScript runs
		}
		if strings.Join(k.Argv, " ") != argv || k.InterruptMode != mode {
			t.Errorf("%s kernel = %+v, want argv %q, %s", lang, k, argv, mode)
		}
	}
	if got := Kernels(false); len(got) != 4 || got["python"].Argv == nil || got["bash"].Argv == nil || got["r"].Argv == nil || got["java"].Argv == nil {
		t.Errorf("Kernels(false) = %v, want python, bash, r and java only", got)
	}
}

func TestWriteConfig(t *testing.T) {
	t.Parallel()
	for _, withDeno := range []bool{true, false} {
		rootfs := t.TempDir()
		if err := writeConfig(rootfs, withDeno); err != nil {
			t.Fatal(err)
		}
		cfg, err := os.ReadFile(filepath.Join(rootfs, ipythonConfig))
		if err != nil || !strings.Contains(string(cfg), startupScript) {
			t.Errorf("ipython config: %v\n%s", err, cfg)
		}
		for _, f := range []string{startupScript, DisplayModule, KernelsFile} {
			if _, err := os.Stat(filepath.Join(rootfs, f)); err != nil {
				t.Error(err)
			}
		}
		_, err = os.Stat(filepath.Join(rootfs, denoKernelSpec))
		if (err == nil) != withDeno {
			t.Errorf("withDeno=%v: Deno kernelspec stat: %v", withDeno, err)
		}
	}
}

func TestStubDebIsValid(t *testing.T) {
	t.Parallel()
	dpkgDeb, err := exec.LookPath("dpkg-deb")
	if err != nil {
		t.Skip("no dpkg-deb to check the stub with")
	}
	deb, err := writeStubDeb(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(dpkgDeb, "--field", deb, "Package", "Version", "Provides").CombinedOutput()
	want := "Package: warren-pythran-stub\nVersion: 1.0\nProvides: python3-pythran"
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("dpkg-deb --field: %v\n%s\nwant\n%s", err, out, want)
	}
	if out, err := exec.Command(dpkgDeb, "--contents", deb).CombinedOutput(); err != nil {
		t.Errorf("dpkg-deb --contents: %v\n%s", err, out)
	}
}
