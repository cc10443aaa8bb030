package codeinterp

import (
	"context"
	"io"
	"os"
	"path"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/aptlayer"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// javacScript builds the Java kernel inside the new rootfs with its own
// JDK, in a private mount and PID namespace (the JVM wants /proc; nothing
// it mounts outlives it): javac, a JAR (class-data sharing reads classes
// only from JARs), then one cell run by JavaKernel's --dump-archive, which
// records the classes a first cell loads into the kernel's CDS archive.
const javacScript = `set -eu
R=$1 JAR=$2 KERNEL=$3
shift 3
mount -t proc proc "$R/proc"
rm -rf "$R/tmp/warren-javac"
mkdir "$R/tmp/warren-javac"
chroot "$R" /usr/bin/javac -encoding UTF-8 -d /tmp/warren-javac "$@"
chroot "$R" /usr/bin/jar --create --file "$JAR" -C /tmp/warren-javac .
rm -rf "$R/tmp/warren-javac"
chroot "$R" /usr/bin/env PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$KERNEL" --dump-archive
`

// compileJava builds the Java kernel from the sources configFiles wrote.
func compileJava(ctx context.Context, rootfs string, lock *os.File, logw io.Writer) error {
	src, err := javaSourceFiles()
	if err != nil {
		return err
	}
	unshare, err := aptlayer.LookPath("unshare")
	if err != nil {
		return err
	}
	argv := []string{unshare, "--mount", "--propagation", "private", "--pid", "--fork", "--",
		"/bin/sh", "-c", javacScript, "sh", rootfs, javaJar, JavaKernel}
	for _, f := range src {
		if strings.HasSuffix(f.name, ".java") {
			argv = append(argv, path.Join("/", f.name))
		}
	}
	return cachedfs.Tool{Name: "javac", Argv: argv, Env: cachedfs.ToolEnv(), Lock: lock, Log: logw}.Run(ctx)
}
