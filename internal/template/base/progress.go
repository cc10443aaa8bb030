package base

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
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
	totalSteps = stepFinish
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

// progress writes "base: ..." lines: one when a step starts and a heartbeat
// while it lasts, so a user watching a multi-minute build sees it moving.
type progress struct {
	w     io.Writer
	start time.Time

	mu        sync.Mutex // mu protects the fields below and serialises writes to w
	step      int
	stepStart time.Time
	items     int    // packages handled in this step so far
	last      string // the latest of them
}

func newProgress(w io.Writer) *progress {
	now := time.Now()
	return &progress{w: w, start: now, stepStart: now}
}

// enter starts step n; going backwards or repeating a step is ignored
// because debootstrap may print a phase header more than once.
func (p *progress) enter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n <= p.step {
		return
	}
	p.step, p.stepStart, p.items, p.last = n, time.Now(), 0, ""
	fmt.Fprintf(p.w, "base: %s... (step %d/%d)\n", stepNames[n], n, totalSteps)
}

// item records one unit of work (a package) in the current step.
func (p *progress) item(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.items++
	p.last = name
}

func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "base: "+format+"\n", args...)
}

// beat writes the heartbeat line for the current step.
func (p *progress) beat() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.step == 0 {
		return
	}
	detail := ""
	if p.items > 0 {
		detail = fmt.Sprintf(", %d packages so far (latest %s)", p.items, p.last)
	}
	fmt.Fprintf(p.w, "base: %s (step %d/%d)%s, %s in this step, %s total\n",
		stepNames[p.step], p.step, totalSteps, detail,
		time.Since(p.stepStart).Round(time.Second), time.Since(p.start).Round(time.Second))
}

// heartbeat calls beat every interval until the returned stop is called.
func (p *progress) heartbeat(ctx context.Context, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.beat()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// observe feeds one line of debootstrap output to the progress display.
func (p *progress) observe(line string) {
	p.mu.Lock()
	cur := p.step
	p.mu.Unlock()
	step, item := stepOf(line, cur)
	if step > 0 {
		p.enter(step)
	}
	if item != "" {
		p.item(item)
	}
	if strings.HasPrefix(line, "E: ") {
		p.printf("debootstrap: %s", line)
	}
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
