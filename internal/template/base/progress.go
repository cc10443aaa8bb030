package base

import (
	"io"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/buildlog"
)

// The steps of a build as the user sees them. debootstrap's own phases are
// recognised from its "I: ..." lines (see stepOf).
const (
	stepIndex = iota + 1
	stepDownload
	stepExtract
	stepCore
	stepUnpackBase
	stepConfigureBase
	stepConfigure
	stepFinish
)

var stepNames = map[int]string{
	stepIndex:         "debootstrap: fetching the package index",
	stepDownload:      "debootstrap: downloading packages",
	stepExtract:       "debootstrap: extracting packages",
	stepCore:          "debootstrap: installing core packages",
	stepUnpackBase:    "debootstrap: unpacking the base system",
	stepConfigureBase: "debootstrap: configuring the base system",
	stepConfigure:     "configuring the rootfs",
	stepFinish:        "trimming, measuring and saving",
}

// newProgress returns the display for a base build: "base: ..." lines, one
// when a step starts and a heartbeat while it lasts.
func newProgress(w io.Writer) *buildlog.Progress {
	return buildlog.New(w, buildlog.Config{Prefix: "base", Steps: stepNames, Tool: "debootstrap", Parse: stepOf})
}

// stepOf maps a debootstrap line to the step it starts (0 for none) and the
// package it reports (empty for none), given the current step.
func stepOf(line string, cur int) (step int, item string) {
	msg, ok := strings.CutPrefix(line, "I: ")
	if !ok {
		return 0, ""
	}
	verb, rest, _ := strings.Cut(msg, " ")
	pkg, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	pkg = strings.TrimSuffix(pkg, "...")
	pkg, _, _ = strings.Cut(pkg, ":") // "libc6:amd64" -> "libc6"
	switch {
	case strings.HasPrefix(msg, "Installing core packages"),
		strings.HasPrefix(msg, "Unpacking required packages"),
		strings.HasPrefix(msg, "Configuring required packages"):
		return stepCore, ""
	case strings.HasPrefix(msg, "Unpacking the base system"):
		return stepUnpackBase, ""
	case strings.HasPrefix(msg, "Configuring the base system"):
		return stepConfigureBase, ""
	case verb == "Retrieving" && (pkg == "InRelease" || pkg == "Release" || pkg == "Packages"):
		return stepIndex, ""
	case verb == "Retrieving":
		return stepDownload, pkg
	case verb == "Extracting":
		return stepExtract, pkg
	case (verb == "Unpacking" || verb == "Configuring") && cur >= stepCore:
		return 0, pkg
	case verb == "Resolving" || verb == "Checking" || verb == "Valid":
		return stepIndex, ""
	}
	return 0, ""
}
