package testutil

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// JavaProgram is the code interpreter's Java program (warren.jshell.Main),
// compiled and started with the host's JDK, for tests of it and of the
// snippets the interpreter sends it.
type JavaProgram struct {
	t     testing.TB
	stdin io.WriteCloser
	out   *bufio.Reader
}

// StartJavaProgram compiles the sources in srcDir (the package
// warren.jshell) and starts the program; it skips t without javac and java.
// The program ends with the test.
func StartJavaProgram(t testing.TB, srcDir string) *JavaProgram {
	t.Helper()
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src, err := filepath.Glob(filepath.Join(srcDir, "*.java"))
	if err != nil || len(src) == 0 {
		t.Fatalf("no Java sources in %s: %v", srcDir, err)
	}
	if out, err := exec.Command("javac", append([]string{"-d", dir}, src...)...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-cp", dir, "warren.jshell.Main")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the program ends when its requests end
		cmd.Wait()
	})
	return &JavaProgram{t: t, stdin: stdin, out: bufio.NewReader(stdout)}
}

// Run sends a cell, and a stop request after stopAfter if that is set; it
// returns the frames up to the cell's end as "type:payload|" text, a NUL
// in a payload shown as ¦.
func (p *JavaProgram) Run(code string, stopAfter time.Duration) string {
	fmt.Fprintf(p.stdin, "x %s\n", base64.StdEncoding.EncodeToString([]byte(code)))
	if stopAfter > 0 {
		time.AfterFunc(stopAfter, func() { io.WriteString(p.stdin, "s\n") })
	}
	var got strings.Builder
	for {
		var head [5]byte
		if _, err := io.ReadFull(p.out, head[:]); err != nil {
			p.t.Fatalf("reading frames: %v", err)
		}
		payload := make([]byte, binary.BigEndian.Uint32(head[1:]))
		if _, err := io.ReadFull(p.out, payload); err != nil {
			p.t.Fatalf("reading frames: %v", err)
		}
		if head[0] == 'd' {
			return got.String()
		}
		fmt.Fprintf(&got, "%c:%s|", head[0], strings.ReplaceAll(string(payload), "\x00", "¦"))
	}
}
