package interpreter

import (
	"fmt"
	"strings"
)

// Java (warren's JShell kernel): as in E2B's Java kernel, environment
// variables are system properties, since a JVM cannot change its own
// environment, and the working directory is the user.dir property. Saving
// and restoring go through warren.jshell.Env, a class of the kernel, so
// that no variable of ours appears among the user's.

func javaChdir(dir string) string {
	return "System.setProperty(\"user.dir\", " + javaQuote(dir) + ");"
}

func javaSetEnv(vars map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(vars) {
		fmt.Fprintf(&b, "System.setProperty(%s, %s);\n", javaQuote(k), javaQuote(vars[k]))
	}
	return b.String()
}

func javaSaveEnv(vars map[string]string) string {
	args := make([]string, 0, 2*len(vars))
	for _, k := range sortedKeys(vars) {
		args = append(args, javaQuote(k), javaQuote(vars[k]))
	}
	return "warren.jshell.Env.save(" + strings.Join(args, ", ") + ");"
}

func javaRestoreEnv(map[string]string) string { return "warren.jshell.Env.restore();" }

// javaQuote is s as a Java string literal. Java translates \uXXXX escapes
// before it reads a literal, so "\u0022" would end one and \u000a break
// it: control characters are written as octal escapes instead, quotes and
// backslashes with a backslash, and everything else (non-ASCII included)
// as itself.
func javaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\%03o`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
