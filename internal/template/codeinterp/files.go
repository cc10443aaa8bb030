package codeinterp

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// Paths in the rootfs that the interpreter server and kernels rely on.
const (
	KernelsFile    = "/etc/warren/kernels.json"
	denoKernelSpec = "/usr/local/share/jupyter/kernels/deno/kernel.json"
	ipythonConfig  = "/etc/ipython/ipython_config.py"
	startupScript  = "/etc/ipython/startup/00-warren.py"
	DisplayModule  = "/usr/local/lib/warren/python/warren_display.py"
	BashKernel     = "/usr/local/lib/warren/python/warren_bash_kernel.py"
	JavaKernel     = "/usr/local/lib/warren/python/warren_java_kernel.py"
	// javaDir holds the Java side of JavaKernel: its sources, and the JAR
	// and class archive built from them (see compileJava).
	javaDir = "/usr/local/lib/warren/java"
	javaJar = javaDir + "/warren-jshell.jar"
	// InterpreterPath is where warren binds its interpreter server into
	// every sandbox; the template's start command runs it through sudo.
	InterpreterPath = "/.warren/interpreter"
	sudoersDropIn   = "/etc/sudoers.d/warren-interpreter"
	connectionField = "{connection_file}"
)

// displayModule holds the e2b/data and e2b/chart formatters; startup is
// the IPython startup file that loads it.
var (
	//go:embed python/warren_display.py
	displayModule []byte
	//go:embed python/00-warren.py
	startupSource []byte
	// bashKernel is our own bash kernel: bookworm packages none.
	//go:embed python/warren_bash_kernel.py
	bashKernel []byte
	// javaKernel is our own Java kernel (IJava is not packaged), with the
	// JShell program it drives.
	//go:embed python/warren_java_kernel.py
	javaKernel []byte
	//go:embed java/warren/jshell
	javaSources embed.FS
)

// Kernel is one entry of KernelsFile: how the interpreter server starts a
// kernel for a language, Jupyter kernelspec style.
type Kernel struct {
	Argv          []string          `json:"argv"`
	Env           map[string]string `json:"env,omitempty"`
	InterruptMode string            `json:"interrupt_mode"` // "signal" (SIGINT) or "message" (interrupt_request)
}

// Kernels returns the language → kernel table; javascript and typescript
// share Deno's kernel, which runs both. bash runs on our own kernel
// (BashKernel): bash_kernel is not packaged in bookworm; java on our
// JShell kernel (JavaKernel): neither is IJava.
func Kernels(withDeno bool) map[string]Kernel {
	k := map[string]Kernel{
		"python": {Argv: []string{"/usr/bin/python3", "-m", "ipykernel_launcher", "-f", connectionField}, InterruptMode: "signal"},
		"bash":   {Argv: []string{"/usr/bin/python3", BashKernel, "-f", connectionField}, InterruptMode: "signal"},
		// The command line of r-cran-irkernel's own kernelspec.
		"r":    {Argv: []string{"/usr/bin/R", "--slave", "-e", "IRkernel::main()", "--args", connectionField}, InterruptMode: "signal"},
		"java": {Argv: []string{"/usr/bin/python3", JavaKernel, "-f", connectionField}, InterruptMode: "signal"},
	}
	if withDeno {
		// Deno colours its text/plain results with ANSI escapes unless
		// NO_COLOR is set; the SDKs expect plain text, as from Python.
		// Deno ignores SIGINT while JavaScript runs; an interrupt_request
		// terminates a busy loop and keeps the context's state (a pending
		// top-level await it does not cancel: the interpreter replaces a
		// kernel that stays busy past its grace period).
		deno := Kernel{Argv: denoArgv(), Env: map[string]string{"NO_COLOR": "1"}, InterruptMode: "message"}
		k["javascript"], k["typescript"] = deno, deno
	}
	return k
}

// denoArgv is the command line `deno jupyter --install` would record,
// with the absolute path (checked against `deno jupyter --help` of 2.9).
func denoArgv() []string {
	return []string{denoBinary, "jupyter", "--kernel", "--conn", connectionField}
}

type rootFile struct {
	name string // relative to the rootfs
	mode fs.FileMode
	data []byte
}

// ipythonConfigSource makes every IPython, kernels included (IPKernelApp
// reads ipython_config.py before ipython_kernel_config.py), run our
// startup file. A system-wide profile startup directory does not exist in
// IPython; /etc/ipython is on its system config path.
const ipythonConfigSource = `# warren: load the E2B result formatters (e2b/data, e2b/chart) in every IPython.
c.InteractiveShellApp.exec_files = ["` + startupScript + `"]
`

// sudoersSource lets the interpreter go to root (kernels run as root, as
// upstream's Jupyter does) with the environment the template set, whole:
// sudo would otherwise reset it, drop PYTHONPATH, LD_* and the like, and
// replace PATH.
const sudoersSource = `# warren: the code interpreter runs as root with the template's environment.
Defaults!` + InterpreterPath + ` !env_reset, !env_delete, !env_check, !secure_path
`

// configFiles lists every file the build writes into the rootfs, for
// writeConfig and for the recipe hash.
func configFiles(withDeno bool) ([]rootFile, error) {
	kernels, err := json.MarshalIndent(Kernels(withDeno), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding kernels: %w", err)
	}
	files := []rootFile{
		{rel(KernelsFile), 0o644, append(kernels, '\n')},
		{rel(ipythonConfig), 0o644, []byte(ipythonConfigSource)},
		{rel(startupScript), 0o644, startupSource},
		{rel(DisplayModule), 0o644, displayModule},
		{rel(BashKernel), 0o644, bashKernel},
		{rel(JavaKernel), 0o644, javaKernel},
		{rel(sudoersDropIn), 0o440, []byte(sudoersSource)},
	}
	src, err := javaSourceFiles()
	if err != nil {
		return nil, err
	}
	files = append(files, src...)
	if withDeno {
		spec, err := json.MarshalIndent(map[string]any{
			"argv":           denoArgv(),
			"display_name":   "Deno",
			"language":       "typescript",
			"interrupt_mode": "signal",
		}, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encoding Deno kernelspec: %w", err)
		}
		files = append(files, rootFile{rel(denoKernelSpec), 0o644, append(spec, '\n')})
	}
	return files, nil
}

// writeConfig writes configFiles into rootfs.
func writeConfig(rootfs string, withDeno bool) error {
	files, err := configFiles(withDeno)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(rootfs)
	if err != nil {
		return fmt.Errorf("opening rootfs: %w", err)
	}
	defer r.Close()
	for _, f := range files {
		if err := cachedfs.PutFile(r, f.name, f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// javaSourceFiles are the Java kernel's sources under javaDir/src, in a
// fixed order (the recipe hash reads them in this order).
func javaSourceFiles() ([]rootFile, error) {
	var files []rootFile
	err := fs.WalkDir(javaSources, "java", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := javaSources.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, rootFile{rel(javaDir) + "/src/" + strings.TrimPrefix(p, "java/"), 0o644, data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading embedded Java sources: %w", err)
	}
	return files, nil
}

func rel(p string) string { return strings.TrimPrefix(p, "/") }
