package interpreter

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// language holds the hidden snippets the server runs in a kernel of one
// language: changing directory at context creation and setting environment
// variables around an execution. Every value is embedded as a quoted literal
// so user input can never become code.
type language struct {
	name string
	// kernel is the kernels-file key whose kernel runs this language
	// (typescript runs on the javascript kernel).
	kernel string
	// identOnly means env var names must be shell identifiers.
	identOnly bool
	chdir     func(dir string) string
	// setEnv sets vars for the rest of the kernel's life (global env).
	setEnv func(vars map[string]string) string
	// saveEnv remembers the current values of vars' keys and sets vars;
	// restoreEnv puts the remembered values back.
	saveEnv    func(vars map[string]string) string
	restoreEnv func(vars map[string]string) string
}

var languages = map[string]*language{
	"python":     {name: "python", kernel: "python", chdir: pyChdir, setEnv: pySetEnv, saveEnv: pySaveEnv, restoreEnv: pyRestoreEnv},
	"javascript": {name: "javascript", kernel: "javascript", chdir: jsChdir, setEnv: jsSetEnv, saveEnv: jsSaveEnv, restoreEnv: jsRestoreEnv},
	"typescript": {name: "typescript", kernel: "javascript", chdir: jsChdir, setEnv: jsSetEnv, saveEnv: jsSaveEnv, restoreEnv: jsRestoreEnv},
	"bash":       {name: "bash", kernel: "bash", identOnly: true, chdir: shChdir, setEnv: shSetEnv, saveEnv: shSaveEnv, restoreEnv: shRestoreEnv},
	"r":          {name: "r", kernel: "r", chdir: rChdir, setEnv: rSetEnv, saveEnv: rSaveEnv, restoreEnv: rRestoreEnv},
	"java":       {name: "java", kernel: "java", chdir: javaChdir, setEnv: javaSetEnv, saveEnv: javaSaveEnv, restoreEnv: javaRestoreEnv},
}

// normalizeLanguage applies the reference server's rules: trimmed,
// lowercased, empty means python, js and ts are aliases.
func normalizeLanguage(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "":
		s = "python"
	case "js":
		s = "javascript"
	case "ts":
		s = "typescript"
	}
	if _, ok := languages[s]; !ok {
		return "", errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("language %q is not supported", s))
	}
	return s, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validateEnv rejects names no kernel can set, so a bad request fails with
// 400 instead of a confusing error from hidden code.
func (l *language) validateEnv(vars map[string]string) error {
	for k, v := range vars {
		bad := k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0)
		if bad || (l.identOnly && !identRE.MatchString(k)) {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("invalid environment variable %q for %s", k, l.name))
		}
	}
	return nil
}

// lit is a JSON literal; JSON strings and objects of strings are also valid
// Python, JavaScript and R literals (Go emits only \uXXXX-style escapes).
func lit(v any) string {
	b, _ := json.Marshal(v) // strings and string maps always marshal
	return string(b)
}

func sortedKeys(vars map[string]string) []string {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Python: __import__ keeps the user's namespace clean, and statements whose
// value is None do not touch Out or _.
func pyChdir(dir string) string { return "__import__('os').chdir(" + lit(dir) + ")" }

func pySetEnv(vars map[string]string) string {
	return "__import__('os').environ.update(" + lit(vars) + ")"
}

func pySaveEnv(vars map[string]string) string {
	return "__e2b_env_saved = {k: __import__('os').environ.get(k) for k in " + lit(sortedKeys(vars)) + "}\n" + pySetEnv(vars)
}

func pyRestoreEnv(map[string]string) string {
	return `def __e2b_env_restore(saved):
    import os
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
__e2b_env_restore(globals().get('__e2b_env_saved', {}))
del __e2b_env_restore
globals().pop('__e2b_env_saved', None)`
}

// JavaScript (Deno's kernel): wrapped in a function returning undefined so
// nothing is displayed.
func jsChdir(dir string) string { return "(() => { process.chdir(" + lit(dir) + "); })();" }

func jsSetEnv(vars map[string]string) string {
	return "(() => { const v = " + lit(vars) + "; for (const k of Object.keys(v)) process.env[k] = v[k]; })();"
}

func jsSaveEnv(vars map[string]string) string {
	return "(() => { globalThis.__e2b_env_saved = Object.fromEntries(" + lit(sortedKeys(vars)) +
		".map((k) => [k, process.env[k]])); })();\n" + jsSetEnv(vars)
}

func jsRestoreEnv(map[string]string) string {
	return `(() => { const s = globalThis.__e2b_env_saved || {}; for (const [k, v] of Object.entries(s)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; } delete globalThis.__e2b_env_saved; })();`
}

// Bash: single quotes with ' spelled '\”.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func shChdir(dir string) string { return "cd " + shQuote(dir) }

func shSetEnv(vars map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(vars) {
		fmt.Fprintf(&b, "export %s=%s\n", k, shQuote(vars[k]))
	}
	return b.String()
}

func shSaveEnv(vars map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(vars) {
		// ${K+x} tells unset from empty, so restore can unset again.
		fmt.Fprintf(&b, "if [ -n \"${%[1]s+x}\" ]; then __e2b_old_%[1]s=\"$%[1]s\"; else unset __e2b_old_%[1]s; fi\n", k)
	}
	return b.String() + shSetEnv(vars)
}

func shRestoreEnv(vars map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(vars) {
		fmt.Fprintf(&b, "if [ -n \"${__e2b_old_%[1]s+x}\" ]; then export %[1]s=\"$__e2b_old_%[1]s\"; unset __e2b_old_%[1]s; else unset %[1]s; fi\n", k)
	}
	return b.String()
}

// R (IRkernel): invisible() keeps results from being displayed.
func rChdir(dir string) string { return "invisible(setwd(" + lit(dir) + "))" }

func rSetEnv(vars map[string]string) string {
	return "invisible(do.call(Sys.setenv, as.list(c(" + rPairs(vars) + "))))"
}

// rSaveEnv asks Sys.getenv for names explicitly: for a single name it
// returns an unnamed value by default, leaving restore nothing to loop over.
func rSaveEnv(vars map[string]string) string {
	return ".e2b_env_saved <- Sys.getenv(c(" + rNames(vars) + "), unset = NA, names = TRUE)\n" + rSetEnv(vars)
}

func rRestoreEnv(map[string]string) string {
	return `invisible(local({ s <- .e2b_env_saved; for (k in names(s)) { v <- s[[k]]; if (is.na(v)) Sys.unsetenv(k) else do.call(Sys.setenv, setNames(list(v), k)) } }))
rm(.e2b_env_saved)`
}

func rPairs(vars map[string]string) string {
	parts := make([]string, 0, len(vars))
	for _, k := range sortedKeys(vars) {
		parts = append(parts, lit(k)+" = "+lit(vars[k]))
	}
	return strings.Join(parts, ", ")
}

func rNames(vars map[string]string) string {
	parts := make([]string, 0, len(vars))
	for _, k := range sortedKeys(vars) {
		parts = append(parts, lit(k))
	}
	return strings.Join(parts, ", ")
}
