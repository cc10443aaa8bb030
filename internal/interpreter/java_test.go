package interpreter

import (
	"path/filepath"
	"testing"

	"github.com/warren-sandbox/warren/internal/testutil"
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
	p := testutil.StartJavaProgram(t, filepath.Join("..", "template", "codeinterp", "java", "warren", "jshell"))
	run := func(code string) string { return p.Run(code, 0) }
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
