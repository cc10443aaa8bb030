package codeinterp

import (
	"context"
	"io"
	"os"
	"path"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// javacScript compiles the Java kernel's sources inside the new rootfs
// with its own JDK, in a private mount and PID namespace (the JVM wants
// /proc; nothing it mounts outlives it). The classes land in javaDir,
// where JavaKernel puts them on the class path.
const javacScript = `set -eu
R=$1 OUT=$2
shift 2
mount -t proc proc "$R/proc"
chroot "$R" /usr/bin/javac -encoding UTF-8 -Xlint:-options -d "$OUT" "$@"
`

// compileJava runs javac on the sources configFiles wrote.
func compileJava(ctx context.Context, rootfs string, lock *os.File, logw io.Writer) error {
	src, err := javaSourceFiles()
	if err != nil {
		return err
	}
	unshare, err := lookPath("unshare")
	if err != nil {
		return err
	}
	argv := []string{unshare, "--mount", "--propagation", "private", "--pid", "--fork", "--",
		"/bin/sh", "-c", javacScript, "sh", rootfs, javaDir}
	for _, f := range src {
		if strings.HasSuffix(f.name, ".java") {
			argv = append(argv, path.Join("/", f.name))
		}
	}
	return cachedfs.Tool{Name: "javac", Argv: argv, Env: cachedfs.ToolEnv(), Lock: lock, Log: logw}.Run(ctx)
}
