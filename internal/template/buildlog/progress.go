// Package buildlog turns a template build's command output into progress lines a person can follow, and keeps the tail for error messages.
package buildlog

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Config describes one template's build as the user sees it.
type Config struct {
	// Prefix starts every line, followed by ": " ("base").
	Prefix string
	// Steps names the steps, numbered from 1; the total printed in
	// "(step n/total)" is len(Steps).
	Steps map[int]string
	// Tool names the command whose "E: " lines Observe repeats
	// ("debootstrap", "apt").
	Tool string
	// Parse maps a line of the command's output to the step it starts (0
	// for none) and the package it reports (empty for none), given the
	// current step.
	Parse func(line string, cur int) (step int, item string)
}

// Progress writes "<prefix>: ..." lines: one when a step starts and a
// heartbeat while it lasts, so a user watching a multi-minute build sees it
// moving.
type Progress struct {
	w     io.Writer
	c     Config
	total int
	start time.Time

	mu        sync.Mutex // mu protects the fields below and serialises writes to w
	step      int
	stepStart time.Time
	items     int    // packages handled in this step so far
	last      string // the latest of them
}

// New returns a Progress writing to w.
func New(w io.Writer, c Config) *Progress {
	now := time.Now()
	return &Progress{w: w, c: c, total: len(c.Steps), start: now, stepStart: now}
}

// Enter starts step n; going backwards or repeating a step is ignored
// because commands may print a phase header more than once (debootstrap) or
// interleave phases when they work in batches (apt).
func (p *Progress) Enter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n <= p.step {
		return
	}
	p.step, p.stepStart, p.items, p.last = n, time.Now(), 0, ""
	fmt.Fprintf(p.w, "%s: %s... (step %d/%d)\n", p.c.Prefix, p.c.Steps[n], n, p.total)
}

// Item records one unit of work (a package) in the current step.
func (p *Progress) Item(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.items++
	p.last = name
}

// Printf writes one line, prefixed and newline-terminated.
func (p *Progress) Printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, p.c.Prefix+": "+format+"\n", args...)
}

// Beat writes the heartbeat line for the current step.
func (p *Progress) Beat() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.step == 0 {
		return
	}
	detail := ""
	if p.items > 0 {
		detail = fmt.Sprintf(", %d packages so far (latest %s)", p.items, p.last)
	}
	fmt.Fprintf(p.w, "%s: %s (step %d/%d)%s, %s in this step, %s total\n", p.c.Prefix,
		p.c.Steps[p.step], p.step, p.total, detail,
		time.Since(p.stepStart).Round(time.Second), time.Since(p.start).Round(time.Second))
}

// Heartbeat calls Beat every interval until the returned stop is called.
func (p *Progress) Heartbeat(ctx context.Context, interval time.Duration) (stop func()) {
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
				p.Beat()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Observe feeds one line of the command's output to the display.
func (p *Progress) Observe(line string) {
	p.mu.Lock()
	cur := p.step
	p.mu.Unlock()
	step, item := p.c.Parse(line, cur)
	if step > 0 {
		p.Enter(step)
	}
	if item != "" {
		p.Item(item)
	}
	if strings.HasPrefix(line, "E: ") {
		p.Printf("%s: %s", p.c.Tool, line)
	}
}
