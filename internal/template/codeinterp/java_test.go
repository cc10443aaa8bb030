package codeinterp

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// The cells of one JShell in order: state carries from each to the next.
func TestJavaProgram(t *testing.T) {
	t.Parallel()
	p := testutil.StartJavaProgram(t, filepath.Join("java", "warren", "jshell"))
	tests := []struct {
		name, code string
		stop       time.Duration
		want       string // the frames, or a prefix of them when wantPrefix
		wantPrefix bool
	}{
		{"println is two writes", `System.out.println("Hello, World!")`, 0, "o:Hello, World!|o:\n|", false},
		{"stderr, UTF-8", `System.err.print("é 日本")`, 0, "e:é 日本|", false},
		{"a string value is not quoted", `"a" + "b"`, 0, "r:ab|", false},
		{"a declaration has no value", `int n = 6;`, 0, "", false},
		{"several snippets, the last one's value", "import java.util.*;\nList<Integer> l = new ArrayList<>(List.of(n, 7));\nint times(int a, int b) { return a * b; }\ntimes(l.get(0), l.get(1))", 0, "r:42|", false},
		{"a char value", `char c = 65; c`, 0, "r:A|", false},
		{"null is no value", `System.getProperty("no.such.property")`, 0, "", false},
		{"comments only", "// nothing\n/* here */", 0, "", false},
		{"a compile error", `int x = "s";`, 0, "x:CompilationException¦incompatible types: java.lang.String cannot be converted to int¦", true},
		{"an unfinished cell", `if (n > 1) {`, 0, "x:CompilationException¦reached end of file while parsing¦", true},
		{"an exception, and the snippets after it do not run", "System.out.print(1);\nint z = 1 / 0;\nSystem.out.print(2);", 0, "o:1|x:java.lang.ArithmeticException¦/ by zero¦java.lang.ArithmeticException: / by zero\n\tat ", true},
		{"a busy loop is stopped", `while (true) { }`, 500 * time.Millisecond, "x:InterruptedException¦", true},
		{"a sleep is stopped", `Thread.sleep(60_000)`, 500 * time.Millisecond, "x:InterruptedException¦", true},
		{"state survives the stops", `n * 7`, 0, "r:42|", false},
		{"user code cannot read the requests", `System.in.read()`, 0, "r:-1|", false},
	}
	for _, tc := range tests {
		got := p.Run(tc.code, tc.stop)
		if tc.wantPrefix && !strings.HasPrefix(got, tc.want) || !tc.wantPrefix && got != tc.want {
			t.Errorf("%s: %q gave %q, want %q", tc.name, tc.code, got, tc.want)
		}
	}
}
