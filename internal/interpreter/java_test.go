package interpreter

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
)

func TestJavaQuote(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`C:\dir\`, `"C:\\dir\\"`},
		{"a\nb\r\tc", `"a\nb\r\tc"`},
		// Java would turn a \u0022 escape into a quote before lexing: a
		// backslash in the input is always doubled, so none survives.
		{`\u0022); System.exit(1); ("`, `"\\u0022); System.exit(1); (\""`},
		{"\x01\x1f\x7f", `"\001\037\177"`},
		{"日本 é 🙂", `"日本 é 🙂"`},
	}
	for _, tc := range tests {
		if got := javaQuote(tc.in); got != tc.want {
			t.Errorf("javaQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestJavaSnippets(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"NEWV": "x", "OLDV": "new"}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"chdir", javaChdir(`/home/a "b"`), `System.setProperty("user.dir", "/home/a \"b\"");`},
		{"set", javaSetEnv(vars), "System.setProperty(\"NEWV\", \"x\");\nSystem.setProperty(\"OLDV\", \"new\");\n"},
		{"save", javaSaveEnv(vars), `warren.jshell.Env.save("NEWV", "x", "OLDV", "new");`},
		{"restore", javaRestoreEnv(vars), `warren.jshell.Env.restore();`},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// The snippets run for real in the Java kernel's own JShell program (on
// the host's JDK): values with quotes, backslashes, a would-be \u escape,
// line breaks and non-ASCII arrive unchanged, and restore brings back the
// old value or clears a property that was unset.
func TestJavaSnippetsRun(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src, _ := filepath.Glob(filepath.Join("..", "template", "codeinterp", "java", "warren", "jshell", "*.java"))
	if out, err := exec.Command("javac", append([]string{"-d", dir}, src...)...).CombinedOutput(); err != nil {
		t.Fatalf("javac %v: %v\n%s", src, err, out)
	}
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-cp", dir, "warren.jshell.Main")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReader(stdout)
	run := func(code string) string {
		fmt.Fprintf(stdin, "x %s\n", base64.StdEncoding.EncodeToString([]byte(code)))
		var out strings.Builder
		for {
			var head [5]byte
			if _, err := io.ReadFull(r, head[:]); err != nil {
				t.Fatalf("reading the kernel: %v", err)
			}
			payload := make([]byte, binary.BigEndian.Uint32(head[1:]))
			if _, err := io.ReadFull(r, payload); err != nil {
				t.Fatalf("reading the kernel: %v", err)
			}
			if head[0] == 'd' {
				return out.String()
			}
			fmt.Fprintf(&out, "%c:%s|", head[0], payload)
		}
	}
	value := "it's \"q\" \\u0022 $HOME \\n\nline2\t\x01日本 🙂"
	vars := map[string]string{"NEWV": value, "OLDV": "new"}
	report := `"[" + System.getProperty("NEWV", "unset") + "][" + System.getProperty("OLDV") + "][" + System.getProperty("user.dir") + "]"`
	tests := []struct{ code, want string }{
		{javaChdir("/tmp/\"x\"") + "\n" + javaSetEnv(map[string]string{"OLDV": "old"}), ""},
		{javaSaveEnv(vars), ""},
		{report, "r:[" + value + "][new][/tmp/\"x\"]|"},
		{javaRestoreEnv(vars), ""},
		{report, "r:[unset][old][/tmp/\"x\"]|"},
	}
	for _, tc := range tests {
		if got := run(tc.code); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.code, got, tc.want)
		}
	}
}
