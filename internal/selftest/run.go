package selftest

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"time"
)

// Verdict is one probe's outcome.
type Verdict struct {
	Probe Probe
	Err   error // nil: held
	Took  time.Duration
}

// Setup creates the two sandboxes the probes share; cleanup kills them.
func Setup(ctx context.Context, c *Client, template string) (*Env, func(), error) {
	a, err := c.Create(ctx, template, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the probed sandbox: %w", err)
	}
	b, err := c.Create(ctx, template, nil)
	if err != nil {
		a.Kill(ctx)
		return nil, nil, fmt.Errorf("creating its neighbour: %w", err)
	}
	cleanup := func() {
		ctx := context.WithoutCancel(ctx)
		a.Kill(ctx)
		b.Kill(ctx)
	}
	return &Env{C: c, A: a, B: b, Template: template}, cleanup, nil
}

// Select returns the probes whose names match re (all when re is nil).
func Select(re *regexp.Regexp) []Probe {
	var out []Probe
	for _, p := range Probes {
		if re == nil || re.MatchString(p.Name) {
			out = append(out, p)
		}
	}
	return out
}

// Run runs probes and writes one line per verdict to w.
func Run(ctx context.Context, e *Env, probes []Probe, w io.Writer) []Verdict {
	var out []Verdict
	for _, p := range probes {
		start := time.Now()
		err := p.Run(ctx, e)
		v := Verdict{Probe: p, Err: err, Took: time.Since(start)}
		out = append(out, v)
		status := "HELD"
		detail := ""
		if err != nil {
			status, detail = "ESCAPED", ": "+err.Error()
		}
		fmt.Fprintf(w, "%-8s %-18s %s (%.1fs)%s\n", status, p.Name, p.Why, v.Took.Seconds(), detail)
	}
	return out
}
