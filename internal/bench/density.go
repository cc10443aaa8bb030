package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// DensityConfig sizes `warren bench --density`.
type DensityConfig struct {
	Max        int           // sandboxes to keep live at the end
	IdleWindow time.Duration // how long idle CPU is measured at each step
	MemFloorMB int           // stop early when the host has less available
	Bridge     string        // the server's bridge, for the reclaim check
}

// densityRow is the state of the host with live sandboxes.
type densityRow struct {
	Live      int
	CreateP50 float64 // ms, the last (up to) 25 creates
	CmdP50    float64 // ms, commands.run('true') on the last (up to) 25
	Busy      float64 // % of one core, host-wide, with Live sandboxes idle
	IdleCPU   float64 // % of one core per sandbox, host-wide, baseline subtracted
	PssMiB    float64 // MiB: mean proportional set size of the last (up to) 20
	DropMiB   float64 // MiB: the host's MemAvailable drop, per sandbox
}

// densityBench creates sandboxes one after another up to d.Max, each
// answering a command, and at a few counts measures what the live ones
// cost: host CPU (/proc/stat, the server's idle baseline subtracted) and
// host memory (MemAvailable's drop) per sandbox, with the create and
// command times of that moment. Then it runs a command in the first and
// the last 25, kills everything and checks the host got it all back.
func densityBench(ctx context.Context, c *Config, d DensityConfig) error {
	cl := &selftest.Client{URL: c.URL, APIKey: c.APIKey, HTTP: &http.Client{Timeout: 2 * time.Minute}}
	fmt.Printf("measuring the idle server for %v...\n", d.IdleWindow)
	baseCPU := hostBusy(d.IdleWindow)
	baseMem := memAvailableMB()
	var (
		sbs     []*selftest.Sandbox
		creates []float64
		cmds    []float64
		rows    []densityRow
		failed  int
	)
	defer func() { killAll(cl, sbs) }()
	steps := []int{1, 20, 100, 250, 500, 1000}
	for n := 1; n <= d.Max; n++ {
		if memAvailableMB() < d.MemFloorMB {
			fmt.Printf("stopping at %d live: less than %d MB of host memory available\n", n-1, d.MemFloorMB)
			break
		}
		start := time.Now()
		sb, err := cl.Create(ctx, "base", &warren.CreateOptions{Timeout: 2 * time.Hour})
		if err != nil {
			return fmt.Errorf("bench: create #%d: %w", n, err)
		}
		creates = append(creates, ms(time.Since(start)))
		sbs = append(sbs, sb)
		t, err := runTrue(ctx, sb)
		if err != nil {
			failed++
			fmt.Printf("command in sandbox #%d failed: %v\n", n, err)
		}
		cmds = append(cmds, t)
		if slices.Contains(steps, n) || n == d.Max {
			time.Sleep(2 * time.Second) // let the last create settle
			busy := hostBusy(d.IdleWindow)
			cpu := (busy - baseCPU) / float64(n)
			drop := float64(baseMem-memAvailableMB()) / float64(n)
			row := densityRow{Live: n, CreateP50: p50Last(creates, 25), CmdP50: p50Last(cmds, 25), Busy: busy, IdleCPU: cpu, PssMiB: meanPss(sbs[max(0, n-20):]), DropMiB: drop}
			rows = append(rows, row)
			fmt.Printf("  %4d live: create p50 %6.0f ms, command p50 %5.1f ms, idle CPU %.3f %% of a core, %.1f MiB (PSS) each\n",
				n, row.CreateP50, row.CmdP50, row.IdleCPU, row.PssMiB)
		}
	}
	first, last := commandRound(ctx, sbs[:min(25, len(sbs))]), commandRound(ctx, sbs[max(0, len(sbs)-25):])
	failed += first.failed + last.failed
	live := len(sbs)
	ids := make([]string, len(sbs))
	for i, sb := range sbs {
		ids[i] = sb.ID
	}
	killAll(cl, sbs)
	sbs = nil
	reclaimErr := checkReclaimed(c, d, ids, baseMem)
	// The idle baseline again, with everything gone: the one taken first
	// can carry the tail of whatever ran before the benchmark, which would
	// be subtracted from every step. The lower of the two counts.
	time.Sleep(2 * time.Second)
	after := hostBusy(d.IdleWindow)
	fmt.Printf("idle server: %.3f %% of a core before, %.3f %% after\n", baseCPU, after)
	base := min(baseCPU, after)
	for i := range rows {
		rows[i].IdleCPU = (rows[i].Busy - base) / float64(rows[i].Live)
	}
	printDensity(c, d, rows, creates, first, last, failed, live)
	if c.PlotDir != "" {
		if err := plotDensity(c, rows); err != nil {
			return err
		}
	}
	return reclaimErr
}

// runTrue runs `true` as the SDK's commands.run does and times it.
func runTrue(ctx context.Context, sb *selftest.Sandbox) (float64, error) {
	start := time.Now()
	res, err := sb.Run(ctx, "user", "true")
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", res.ExitCode, res)
	}
	return ms(time.Since(start)), err
}

type round struct {
	p50    float64
	failed int
}

// commandRound runs `true` in each sandbox, one after another.
func commandRound(ctx context.Context, sbs []*selftest.Sandbox) round {
	var ts []float64
	var r round
	for _, sb := range sbs {
		t, err := runTrue(ctx, sb)
		if err != nil {
			r.failed++
			continue
		}
		ts = append(ts, t)
	}
	r.p50 = percentile(ts, 50)
	return r
}

func p50Last(xs []float64, n int) float64 { return percentile(xs[max(0, len(xs)-n):], 50) }

// killAll kills the sandboxes, eight at a time.
func killAll(cl *selftest.Client, sbs []*selftest.Sandbox) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, sb := range sbs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sb.Kill(ctx)
		}()
	}
	wg.Wait()
}

func printDensity(c *Config, d DensityConfig, rows []densityRow, creates []float64, first, last round, failed, live int) {
	fmt.Printf("\n%s: density (idle CPU over %v per step, the idle server's subtracted)\n", c.Runtime, d.IdleWindow)
	fmt.Println("| live | create p50 (ms) | command p50 (ms) | idle CPU per sandbox (% of a core) | memory per sandbox, PSS (MiB) | host MemAvailable drop per sandbox (MiB) |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Printf("| %d | %.0f | %.1f | %.3f | %.1f | %.1f |\n", r.Live, r.CreateP50, r.CmdP50, r.IdleCPU, r.PssMiB, r.DropMiB)
	}
	early, late := percentile(creates[:min(25, len(creates))], 50), p50Last(creates, 25)
	fmt.Printf("create p50: the first 25 (1 to 25 live) %.0f ms, the last 25 (to %d live) %.0f ms (%.2fx)\n",
		early, live, late, ratio(late, early))
	fmt.Printf("commands.run('true') with %d live: first 25 p50 %.1f ms, last 25 p50 %.1f ms (%.2fx); failed commands: %d\n",
		live, first.p50, last.p50, ratio(last.p50, first.p50), failed)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// meanPss is the mean host memory (proportional set size, MiB) of the
// sandboxes' processes.
func meanPss(sbs []*selftest.Sandbox) float64 {
	if len(sbs) == 0 {
		return 0
	}
	kb := 0
	for _, sb := range sbs {
		for _, pid := range sandboxPids(sb.ID) {
			kb += pssKB(pid)
		}
	}
	return float64(kb) / 1024 / float64(len(sbs))
}
