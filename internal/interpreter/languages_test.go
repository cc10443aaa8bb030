package interpreter

import (
	"os/exec"
	"strings"
	"testing"
)

// The env snippets are run for real where the interpreter exists: set,
// check inside, restore, check the original environment is back (an unset
// variable stays unset, a set one gets its old value).
func TestEnvSnippetsRun(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"NEWV": `it's "q" $HOME \n`, "OLDV": "new"}
	tests := []struct {
		name   string
		bin    string
		args   []string
		lang   *language
		report string
	}{
		{"bash", "bash", []string{"-c"}, languages["bash"], "echo \"[${NEWV-unset}][$OLDV]\"\n"},
		{"python", "python3", []string{"-c"}, languages["python"], "import os; print('[%s][%s]' % (os.environ.get('NEWV', 'unset'), os.environ['OLDV']))\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(tc.bin); err != nil {
				t.Skipf("%s not installed", tc.bin)
			}
			prog := tc.lang.saveEnv(vars) + "\n" + tc.report + tc.lang.restoreEnv(vars) + "\n" + tc.report
			cmd := exec.Command(tc.bin, append(tc.args, prog)...)
			cmd.Env = []string{"OLDV=old", "PATH=/usr/bin:/bin", "HOME=/root"}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s\n%s", err, out, prog)
			}
			want := "[it's \"q\" $HOME \\n][new]\n[unset][old]\n"
			if string(out) != want {
				t.Errorf("got %q, want %q", out, want)
			}
		})
	}
}

func TestNormalizeLanguage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "python", " Python ": "python", "js": "javascript", "TS": "typescript", "bash": "bash", "r": "r", " JAVA": "java"} {
		if got, err := normalizeLanguage(in); err != nil || got != want {
			t.Errorf("normalizeLanguage(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := normalizeLanguage("cobol"); err == nil {
		t.Error("cobol accepted")
	}
}

func TestValidateEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lang string
		key  string
		ok   bool
	}{
		{"python", "A_1", true}, {"python", "a-b.c", true}, {"python", "", false}, {"python", "A=B", false},
		{"bash", "A_1", true}, {"bash", "a-b", false}, {"bash", "1A", false},
	}
	for _, tc := range tests {
		err := languages[tc.lang].validateEnv(map[string]string{tc.key: "v"})
		if (err == nil) != tc.ok {
			t.Errorf("%s %q: err = %v", tc.lang, tc.key, err)
		}
	}
	if !strings.Contains(pyChdir(`/a "b"`), `"/a \"b\""`) {
		t.Errorf("pyChdir does not quote: %s", pyChdir(`/a "b"`))
	}
}
