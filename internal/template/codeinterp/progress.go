package codeinterp

import (
	"io"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/aptlayer"
	"github.com/warren-sandbox/warren/internal/template/buildlog"
)

// The steps of a build after aptlayer's copy and apt steps.
const (
	stepDeno = aptlayer.NextStep + iota
	stepConfigure
	stepFinish
)

var stepNames = map[int]string{
	stepDeno:      "installing Deno",
	stepConfigure: "writing kernels and IPython configuration, compiling the Java kernel",
	stepFinish:    "trimming, measuring and saving",
}

// newProgress returns the display for a build: "code-interpreter: ..."
// lines, one per step and a heartbeat while a step lasts.
func newProgress(w io.Writer) *buildlog.Progress {
	return aptlayer.NewProgress(w, prefix, stepNames)
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
