package codeinterp

import (
	"io"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/buildlog"
)

// The steps of a build as the user sees them; base.Ensure reports its own
// steps before step 1 when the base template is not built yet.
const (
	stepCopy = iota + 1
	stepLists
	stepDownload
	stepUnpack
	stepSetup
	stepDeno
	stepConfigure
	stepFinish
)

var stepNames = map[int]string{
	stepCopy:      "copying the base rootfs",
	stepLists:     "apt: fetching package lists",
	stepDownload:  "apt: downloading packages",
	stepUnpack:    "apt: unpacking packages",
	stepSetup:     "apt: configuring packages",
	stepDeno:      "installing Deno",
	stepConfigure: "writing kernels and IPython configuration, compiling the Java kernel",
	stepFinish:    "trimming, measuring and saving",
}

// newProgress returns the display for a build: "code-interpreter: ..."
// lines, one per step and a heartbeat while a step lasts.
func newProgress(w io.Writer) *buildlog.Progress {
	return buildlog.New(w, buildlog.Config{Prefix: prefix, Steps: stepNames, Tool: "apt",
		Parse: func(line string, _ int) (int, string) { return aptStepOf(line) }})
}

// observe feeds one line of apt-get output to p.
func observe(p *buildlog.Progress, line string) {
	if strings.Contains(line, "warren-pythran-stub") {
		// Installed alone before the real install; its "Setting up"
		// would move the display past the downloads still to come.
		return
	}
	p.Observe(line)
}

// aptStepOf maps an apt-get line to the step it belongs to and the
// package it names, if any.
//
//	Get:3 http://deb.debian.org/debian bookworm/main amd64 python3-numpy amd64 1:1.24.2-1 [6000 kB]
//	Unpacking python3-numpy (1:1.24.2-1) ...
//	Setting up python3-numpy (1:1.24.2-1) ...
func aptStepOf(line string) (step int, item string) {
	fields := strings.Fields(line)
	switch {
	case len(fields) == 0:
		return 0, ""
	case strings.HasPrefix(fields[0], "Get:") || strings.HasPrefix(fields[0], "Hit:") || strings.HasPrefix(fields[0], "Ign:"):
		// A package line has 9 fields; index lines ("... bookworm
		// InRelease [151 kB]") have at most 7.
		if len(fields) >= 9 {
			return stepDownload, fields[4]
		}
		return stepLists, ""
	case fields[0] == "Unpacking" && len(fields) > 1:
		return stepUnpack, strings.Split(fields[1], ":")[0]
	case fields[0] == "Setting" && len(fields) > 2 && fields[1] == "up":
		return stepSetup, strings.Split(fields[2], ":")[0]
	}
	return 0, ""
}
