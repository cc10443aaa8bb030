package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// BusyConfig sizes `warren bench --busy`.
type BusyConfig struct {
	Busy     int // sandboxes that each spin every vCPU they have
	Commands int // commands timed in the idle sandbox, before and during
	Creates  int // creates timed (one after another) while they spin
}

// busyRow is one phase's figures.
type busyRow struct {
	phase              string
	cmdP50, cmdP95     float64 // ms, commands.run('true') in an idle sandbox
	cmdFailed          int
	createP50, createM float64 // ms, cold creates one after another (p50, max)
	createFailed       int
	busyFailed         int // commands in the busy sandboxes that failed
	busyRan            int // of how many
}

// busyBench measures what many busy sandboxes do to everyone else: the
// round trip of a command in an idle sandbox and the time of a cold create,
// first on a quiet machine, then with c.Busy sandboxes each spinning its
// vCPUs; a command in every busy sandbox must answer too. Failures are
// counted, not hidden: the point is that none happen (no 503, no
// terminated stream) while everything gets slower.
func busyBench(ctx context.Context, c *Config, b BusyConfig) error {
	base, err := baselineRuncTrue(ctx, c)
	if err != nil {
		return err
	}
	cl := &selftest.Client{URL: c.URL, APIKey: c.APIKey, HTTP: &http.Client{Timeout: 5 * time.Minute}}
	var all []*selftest.Sandbox
	defer func() { killAll(cl, all) }()
	idle, err := cl.Create(ctx, "base", &warren.CreateOptions{Timeout: time.Hour})
	if err != nil {
		return err
	}
	all = append(all, idle)
	quiet, made := busyPhase(ctx, cl, idle, nil, b, "quiet")
	all = append(all, made...)
	// Created on a quiet machine, then set spinning all together: a
	// create among spinning sandboxes is what the second phase times.
	fmt.Printf("creating %d sandboxes, then setting them spinning...\n", b.Busy)
	var busy []*selftest.Sandbox
	for i := 0; i < b.Busy; i++ {
		sb, err := cl.Create(ctx, "base", &warren.CreateOptions{Timeout: time.Hour})
		if err != nil {
			return fmt.Errorf("busy sandbox %d: %w", i+1, err)
		}
		all, busy = append(all, sb), append(busy, sb)
	}
	for i, sb := range busy {
		// Every vCPU it has, spinning until it is killed.
		if _, err := sb.Run(ctx, "user", "for i in $(seq $(nproc)); do nohup sh -c 'while :; do :; done' >/dev/null 2>&1 & done"); err != nil {
			return fmt.Errorf("spinning in busy sandbox %d: %w", i+1, err)
		}
	}
	time.Sleep(10 * time.Second) // PSI's avg10 settles
	loaded, made := busyPhase(ctx, cl, idle, busy, b, fmt.Sprintf("%d busy", b.Busy))
	all = append(all, made...)
	fmt.Printf("baseline `runc run /bin/true`: p50 %.1f ms over %d runs\n", percentile(base, 50), len(base))
	fmt.Println("| phase | command p50 ms | p95 ms | p50 / baseline | failed | create p50 ms | max ms | create failed | busy sandboxes' commands failed |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range []busyRow{quiet, loaded} {
		fmt.Printf("| %s | %.1f | %.1f | %.2fx | %d / %d | %.0f | %.0f | %d / %d | %d / %d |\n", r.phase, r.cmdP50, r.cmdP95,
			r.cmdP50/percentile(base, 50), r.cmdFailed, b.Commands, r.createP50, r.createM, r.createFailed, b.Creates, r.busyFailed, r.busyRan)
	}
	if f := loaded.cmdFailed + loaded.createFailed + loaded.busyFailed + quiet.cmdFailed + quiet.createFailed; f > 0 {
		return fmt.Errorf("%d operations failed", f)
	}
	return nil
}

// busyPhase times b.Commands commands in idle, b.Creates cold creates one
// after another, and one command in each of busy, all at once.
func busyPhase(ctx context.Context, cl *selftest.Client, idle *selftest.Sandbox, busy []*selftest.Sandbox, b BusyConfig, phase string) (busyRow, []*selftest.Sandbox) {
	row := busyRow{phase: phase}
	var cmds []float64
	for range b.Commands {
		start := time.Now()
		if r, err := idle.Run(ctx, "user", "true"); err != nil || r.ExitCode != 0 {
			row.cmdFailed++
			fmt.Printf("%s: a command in the idle sandbox: %v\n", phase, err)
			continue
		}
		cmds = append(cmds, ms(time.Since(start)))
	}
	row.cmdP50, row.cmdP95 = percentile(cmds, 50), percentile(cmds, 95)
	var made []*selftest.Sandbox
	var creates []float64
	for range b.Creates {
		start := time.Now()
		sb, err := cl.Create(ctx, "base", &warren.CreateOptions{Timeout: 10 * time.Minute})
		if err != nil {
			row.createFailed++
			fmt.Printf("%s: a create: %v\n", phase, err)
			continue
		}
		creates = append(creates, ms(time.Since(start)))
		made = append(made, sb)
	}
	row.createP50, row.createM = percentile(creates, 50), percentile(creates, 100)
	row.busyFailed, row.busyRan = runInEach(ctx, busy, phase), len(busy)
	return row, made
}

// runInEach runs a short command in every sandbox at once and counts the
// failures (a stream cut short shows here).
func runInEach(ctx context.Context, sbs []*selftest.Sandbox, phase string) int {
	var mu sync.Mutex
	var failed []error
	var wg sync.WaitGroup
	for _, sb := range sbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := sb.Run(ctx, "user", "echo alive")
			if err == nil && !strings.Contains(r.Stdout, "alive") {
				err = fmt.Errorf("output %q", r.Stdout)
			}
			if err != nil {
				mu.Lock()
				failed = append(failed, fmt.Errorf("sandbox %s: %w", sb.ID, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		fmt.Printf("%s: %d busy sandboxes' commands failed: %v\n", phase, len(failed), errors.Join(failed[:min(3, len(failed))]...))
	}
	return len(failed)
}
