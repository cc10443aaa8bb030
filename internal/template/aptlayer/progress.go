package aptlayer

import (
	"io"
	"maps"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/buildlog"
)

// The first steps of every apt layer build; a template numbers its own
// steps from NextStep. base.Ensure reports its own steps before step 1 when
// the base template is not built yet.
const (
	StepCopy = iota + 1
	StepLists
	StepDownload
	StepUnpack
	StepSetup
	// NextStep is the number of a template's first own step.
	NextStep
)

var stepNames = map[int]string{
	StepCopy:     "copying the base rootfs",
	StepLists:    "apt: fetching package lists",
	StepDownload: "apt: downloading packages",
	StepUnpack:   "apt: unpacking packages",
	StepSetup:    "apt: configuring packages",
}

// NewProgress returns the display for a build: "<prefix>: ..." lines, one
// per step and a heartbeat while a step lasts. extra names the template's
// own steps, numbered from NextStep.
func NewProgress(w io.Writer, prefix string, extra map[int]string) *buildlog.Progress {
	steps := maps.Clone(stepNames)
	maps.Copy(steps, extra)
	return buildlog.New(w, buildlog.Config{Prefix: prefix, Steps: steps, Tool: "apt",
		Parse: func(line string, _ int) (int, string) { return StepOf(line) }})
}

// StepOf maps an apt-get line to the step it belongs to and the package it
// names, if any.
//
//	Get:3 http://deb.debian.org/debian bookworm/main amd64 python3-numpy amd64 1:1.24.2-1 [6000 kB]
//	Unpacking python3-numpy (1:1.24.2-1) ...
//	Setting up python3-numpy (1:1.24.2-1) ...
func StepOf(line string) (step int, item string) {
	fields := strings.Fields(line)
	switch {
	case len(fields) == 0:
		return 0, ""
	case strings.HasPrefix(fields[0], "Get:") || strings.HasPrefix(fields[0], "Hit:") || strings.HasPrefix(fields[0], "Ign:"):
		// A package line has 9 fields; index lines ("... bookworm
		// InRelease [151 kB]") have at most 7.
		if len(fields) >= 9 {
			return StepDownload, fields[4]
		}
		return StepLists, ""
	case fields[0] == "Unpacking" && len(fields) > 1:
		return StepUnpack, strings.Split(fields[1], ":")[0]
	case fields[0] == "Setting" && len(fields) > 2 && fields[1] == "up":
		return StepSetup, strings.Split(fields[2], ":")[0]
	}
	return 0, ""
}
