package codeinterp

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
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
	totalSteps = stepFinish
)

var stepNames = map[int]string{
	stepCopy:      "copying the base rootfs",
	stepLists:     "apt: fetching package lists",
	stepDownload:  "apt: downloading packages",
	stepUnpack:    "apt: unpacking packages",
	stepSetup:     "apt: configuring packages",
	stepDeno:      "installing Deno",
	stepConfigure: "writing kernels and IPython configuration",
	stepFinish:    "trimming, measuring and saving",
}

// progress writes "code-interpreter: ..." lines: one per step and a
// heartbeat while a step lasts.
type progress struct {
	w     io.Writer
	start time.Time

	mu        sync.Mutex // mu protects the fields below and serialises writes to w
	step      int
	stepStart time.Time
	items     int
	last      string
}

func newProgress(w io.Writer) *progress {
	now := time.Now()
	return &progress{w: w, start: now, stepStart: now}
}

// enter starts step n; repeats and steps backwards are ignored, since apt
// interleaves "Unpacking" and "Setting up" when it installs in batches.
func (p *progress) enter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n <= p.step {
		return
	}
	p.step, p.stepStart, p.items, p.last = n, time.Now(), 0, ""
	fmt.Fprintf(p.w, "%s: %s... (step %d/%d)\n", prefix, stepNames[n], n, totalSteps)
}

func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, prefix+": "+format+"\n", args...)
}

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
	fmt.Fprintf(p.w, "%s: %s (step %d/%d)%s, %s in this step, %s total\n", prefix,
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

// observe feeds one line of apt-get output to the display.
func (p *progress) observe(line string) {
	if strings.Contains(line, "warren-pythran-stub") {
		// Installed alone before the real install; its "Setting up"
		// would move the display past the downloads still to come.
		return
	}
	step, item := aptStepOf(line)
	if step > 0 {
		p.enter(step)
	}
	if item != "" {
		p.mu.Lock()
		p.items++
		p.last = item
		p.mu.Unlock()
	}
	if strings.HasPrefix(line, "E: ") {
		p.printf("apt: %s", line)
	}
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
