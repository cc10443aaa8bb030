package main

import (
	"os/exec"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"echo $FOO; exit 3"}, "echo $FOO; exit 3"},
		{[]string{"sh", "-c", "echo $((6*7))"}, "sh -c 'echo $((6*7))'"},
		{[]string{"printf", "%s|", "a b", "it's", ""}, "printf '%s|' 'a b' 'it'\\''s' ''"},
		{[]string{"ls", "/home/user", "a=b,c:d@e"}, "ls /home/user a=b,c:d@e"},
	} {
		if got := commandLine(tc.argv); got != tc.want {
			t.Errorf("commandLine(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// TestCommandLineRoundTrip runs the quoted line through a real bash and
// checks each argument arrives unchanged.
func TestCommandLineRoundTrip(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, argv := range [][]string{
		{"printf", "%s\n", "a b", "it's", "", "$HOME", "`id`", "\"q\"", "x\\y", "tab\there", "new\nline", "*", "ünï"},
		{"printf", "%s\n", "--", "-c", "a;b|c&d", "$((6*7))", "!x", "~"},
	} {
		out, err := exec.Command(bash, "-c", commandLine(argv)).Output()
		if err != nil {
			t.Fatalf("bash -c %q: %v", commandLine(argv), err)
		}
		want := strings.Join(argv[2:], "\n") + "\n"
		if string(out) != want {
			t.Errorf("bash -c %q printed %q, want %q", commandLine(argv), out, want)
		}
	}
}
