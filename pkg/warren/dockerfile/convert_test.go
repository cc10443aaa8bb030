package dockerfile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api/wire"
)

// render prints a request one fact per line, so expectations stay readable.
// File hashes are shown as "hash" since directory sizes vary by filesystem;
// the hash itself is checked against the SDK in sdk_test.go.
func render(req *wire.BuildStart) string {
	var b strings.Builder
	for _, st := range req.Stages {
		fmt.Fprintf(&b, "stage %s %s\n", st.Name, from(st.FromImage, st.FromStage))
		renderSteps(&b, "  ", st.Steps)
	}
	fmt.Fprintf(&b, "final %s\n", from(req.FromImage, req.FromStage))
	renderSteps(&b, "  ", req.Steps)
	if req.StartCmd != "" {
		fmt.Fprintf(&b, "start %s\n", req.StartCmd)
	}
	if req.ReadyCmd != "" {
		fmt.Fprintf(&b, "ready %s\n", req.ReadyCmd)
	}
	for _, k := range slices.Sorted(mapsKeys(req.Labels)) {
		fmt.Fprintf(&b, "label %s=%s\n", k, req.Labels[k])
	}
	if len(req.Expose) > 0 {
		fmt.Fprintf(&b, "expose %s\n", strings.Join(req.Expose, " "))
	}
	return b.String()
}

func from(image, stage string) string {
	if stage != "" {
		return "stage:" + stage
	}
	return image
}

func renderSteps(b *strings.Builder, indent string, steps []wire.Step) {
	for _, s := range steps {
		fmt.Fprintf(b, "%s%d %s %q", indent, s.Line, s.Type, s.Args)
		if s.FilesHash != "" {
			b.WriteString(" hash")
		}
		if s.FromStage != "" {
			b.WriteString(" from=" + s.FromStage)
		}
		if s.Extract {
			b.WriteString(" extract")
		}
		for _, k := range slices.Sorted(mapsKeys(s.Env)) {
			fmt.Fprintf(b, " env:%s=%s", k, s.Env[k])
		}
		b.WriteString("\n")
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// dedent strips the common tab indentation of a raw-string expectation.
func dedent(s string) string {
	lines := strings.Split(strings.TrimPrefix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "\t\t\t")
	}
	return strings.Join(lines, "\n")
}

type convertCase struct {
	name       string
	dockerfile string
	args       map[string]string
	target     string
	tree       map[string]fsEntry // the build context; nil means none
	want       string
	warnings   []string // each must appear in some warning
}

func runConvertCases(t *testing.T, cases []convertCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := Options{BuildArgs: tc.args, Target: tc.target}
			if tc.tree != nil {
				bctx, err := NewContext(writeTree(t, tc.tree))
				if err != nil {
					t.Fatal(err)
				}
				opts.Context = bctx
			}
			req, warnings, err := Convert([]byte(dedent(tc.dockerfile)), opts)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if got, want := render(req), dedent(tc.want); got != want {
				t.Errorf("request:\n%s\nwant:\n%s", got, want)
			}
			for _, w := range tc.warnings {
				if !slices.ContainsFunc(warnings, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("no warning containing %q in %q", w, warnings)
				}
			}
			if len(tc.warnings) == 0 && len(warnings) > 0 {
				t.Errorf("unexpected warnings %q", warnings)
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts Options
			if !tc.noContext {
				bctx, err := NewContext(writeTree(t, errorTree))
				if err != nil {
					t.Fatal(err)
				}
				opts.Context = bctx
			}
			_, _, err := Convert([]byte(tc.dockerfile), opts)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			var le *Error
			if !errors.As(err, &le) || !strings.HasPrefix(tc.want, fmt.Sprintf("Dockerfile:%d: ", le.Line)) {
				t.Errorf("error %#v does not carry the line of %q", err, tc.want)
			}
		})
	}
}

var errorTree = map[string]fsEntry{
	"a.txt":         {Content: "a"},
	"b.txt":         {Content: "b"},
	"x.tar.xz":      {Content: "\xfd7zXZ\x00rest"},
	"one.tar":       {Content: tarOf("f", "1")},
	"two.tar":       {Content: tarOf("g", "2")},
	".dockerignore": {Content: "secret\n"},
	"secret":        {Content: "s"},
}

// errorCases are Dockerfiles that must fail, with the start of the error.
var errorCases = []struct {
	name, dockerfile string
	noContext        bool
	want             string
}{
	{"empty", "", false, "Dockerfile:1: file with no instructions"},
	{"unknown instruction", "FROM debian\nFORM x\n", false, "Dockerfile:2: unknown instruction: FORM (did you mean FROM?)"},
	{"syntax error keeps its line", "FROM debian\nRUN x\nRUN <<EOF\necho\n", false, "Dockerfile:3: unterminated heredoc"},
	{"bad substitution", "FROM debian\nWORKDIR ${}\n", false, `Dockerfile:2: failed to process "${}": syntax error: bad substitution`},
	{"no FROM", "ARG A=1\n", false, "Dockerfile:1: no FROM instruction"},
	{"instruction before FROM", "RUN true\nFROM debian\n", false, "Dockerfile:1: RUN before the first FROM"},
	{"scratch", "FROM scratch\n", false, "Dockerfile:1: FROM scratch is not supported: a template needs a base image with a shell"},
	{"empty base", "ARG IMG\nFROM $IMG\n", false, "Dockerfile:2: FROM needs a base image"},
	{"invalid stage name", "FROM debian AS 1st\n", false, `Dockerfile:1: invalid name for build stage: "1st", name can't start with a number or contain symbols`},
	{"duplicate stage", "FROM debian AS a\nFROM debian AS a\n", false, `Dockerfile:2: duplicate stage name "a"`},
	{"shell", "FROM debian\nSHELL [\"/bin/bash\", \"-c\"]\n", false, "Dockerfile:2: SHELL is not supported: RUN always uses the sandbox's shell"},
	{"onbuild", "FROM debian\nONBUILD RUN x\n", false, "Dockerfile:2: ONBUILD is not supported"},
	{"add git", "FROM debian\nADD git@github.com:a/b.git /src\n", false, "Dockerfile:2: ADD git@github.com:a/b.git: adding a git repository is not supported; clone it in a RUN step"},
	{"add git url", "FROM debian\nADD https://github.com/a/b.git#main /src\n", false, "Dockerfile:2: ADD https://github.com/a/b.git#main: adding a git repository is not supported"},
	{"add checksum", "FROM debian\nADD --checksum=sha256:00 a.txt /x\n", false, "Dockerfile:2: ADD --checksum and --keep-git-dir apply only to URLs and git sources"},
	{"add xz", "FROM debian\nADD x.tar.xz /x/\n", false, "Dockerfile:2: ADD x.tar.xz: xz and zstd compressed archives are not supported; use a .tar, .tar.gz or .tar.bz2"},
	{"add glob of archives", "FROM debian\nADD *.tar /x/\n", false, "Dockerfile:2: ADD *.tar: matches several files including the archive one.tar; give each archive its own ADD"},
	{"copy absolute", "FROM debian\nCOPY /etc/passwd /x\n", false, `Dockerfile:2: invalid source path "/etc/passwd": absolute paths are not allowed, use a path relative to the build context`},
	{"copy escapes", "FROM debian\nCOPY a/../../x /x\n", false, `Dockerfile:2: invalid source path "a/../../x": it escapes the build context`},
	{"copy without context", "FROM debian\nCOPY a.txt /x\n", true, "Dockerfile:2: COPY a.txt needs a build context"},
	{"copy no match", "FROM debian\nCOPY *.md /x/\n", false, "Dockerfile:2: COPY *.md: no files found for \"*.md\""},
	{"copy ignored", "FROM debian\nCOPY secret /x\n", false, "Dockerfile:2: COPY secret: no files found for \"secret\""},
	{"copy exclude", "FROM debian\nCOPY --exclude=*.md . /x\n", false, "Dockerfile:2: COPY --exclude is not supported"},
	{"copy parents", "FROM debian\nCOPY --parents a.txt /x/\n", false, "Dockerfile:2: COPY --parents is not supported"},
	{"copy heredoc", "FROM debian\nCOPY <<EOF /x\nhi\nEOF\n", false, "Dockerfile:2: COPY from a heredoc is not supported"},
	{"copy many to file", "FROM debian\nCOPY a.txt b.txt /x\n", false, "Dockerfile:2: COPY with more than one source needs a destination directory ending in /"},
	{"copy bad chmod", "FROM debian\nCOPY --chmod=u+x a.txt /x\n", false, "Dockerfile:2: --chmod=u+x: only octal modes are supported"},
	{"copy unknown flag", "FROM debian\nCOPY --nope a.txt /x\n", false, "Dockerfile:2: unknown flag: --nope"},
	{"copy from later index", "FROM debian\nCOPY --from=0 /a /b\n", false, "Dockerfile:2: --from=0 does not name an earlier stage"},
	{"copy from later stage", "FROM debian\nCOPY --from=later /a /b\nFROM debian AS later\n", false, "Dockerfile:2: --from=later must name a stage defined before this one"},
	{"copy from own stage", "FROM debian AS me\nCOPY --from=me /a /b\n", false, "Dockerfile:2: --from=me must name a stage defined before this one"},
	{"run secret mount", "FROM debian\nRUN --mount=type=secret,id=x cat /run/secrets/x\n", false, "Dockerfile:2: RUN --mount=type=secret is not supported"},
	{"run bind mount", "FROM debian\nRUN --mount=type=bind,target=/src make\n", false, "Dockerfile:2: RUN --mount=type=bind is not supported"},
	{"run empty", "FROM debian\nRUN []\n", false, "Dockerfile:2: RUN needs a command"},
	{"env without value", "FROM debian\nENV A\n", false, "Dockerfile:2: ENV must have two arguments"},
	{"healthcheck bad type", "FROM debian\nHEALTHCHECK FOO x\n", false, `Dockerfile:2: Unknown type "FOO" in HEALTHCHECK (try CMD)`},
	{"lines count continuations", "FROM debian\nRUN a \\\n  b\nFROM a b\n", false, "Dockerfile:4: FROM requires either one or three arguments"},
}
