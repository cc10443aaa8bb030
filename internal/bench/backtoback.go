package bench

import (
	"context"
	"fmt"
	"time"

	"gonum.org/v1/plot"
)

// The warm pools' rows (issue 34): creates one after another with no
// pause, of base and of the code interpreter, the first few left out (the
// pool's warm-up), and a burst of interpreter creates after a quiet
// minute, twice: what a pool that saw only the back-to-back runs gives,
// then one that has seen a burst. Each is create → first result.

// PoolsConfig shapes the pools' rows.
type PoolsConfig struct {
	// N creates per row, of which the first Skip are not counted in the
	// back-to-back rows.
	N, Skip int
	// Quiet is the pause before each burst.
	Quiet time.Duration
}

// poolsRow is one of the rows: the times counted, in ms.
type poolsRow struct {
	Name   string
	File   string // the picture's name
	MS     []float64
	Failed []string
	// Hits and Creates are the template's pool counters over the row
	// (the script's untimed creates included); Hits is -1 when unknown.
	Hits, Creates int
	ReadyAtStart  int
}

// poolsBench runs the pools' rows against the server; the interpreter's
// are skipped when it has no code-interpreter-v1 template.
func poolsBench(ctx context.Context, c *Config) ([]*poolsRow, error) {
	pc := c.Pools
	var rows []*poolsRow
	row, err := poolsRun(ctx, c, "base", func(r *poolsRow) error {
		var run ttiRun
		err := runNodeBench(ctx, c, "bench/tti.mjs", &run, "BENCH_MODE=sequential", fmt.Sprint("BENCH_N=", pc.N))
		r.MS, r.Failed = skipFirst(run.TTI, pc.Skip), run.Errors
		return err
	})
	if err != nil {
		return nil, err
	}
	row.Name, row.File = fmt.Sprintf("base, %d back to back, first %d left out", pc.N, pc.Skip), "pools-base-b2b"
	rows = append(rows, row)
	sdk, err := c.sdk()
	if err != nil {
		return nil, err
	}
	if ok, err := sdk.TemplateExists(ctx, "code-interpreter-v1"); err != nil || !ok {
		return rows, err
	}
	row, err = poolsRun(ctx, c, "code-interpreter-v1", func(r *poolsRow) error {
		var res ciResult
		err := runNodeBench(ctx, c, "bench/runcode.mjs", &res, "BENCH_CI_GAP_MS=0", "BENCH_CI_RUNS=1", fmt.Sprint("BENCH_CI_FIRST=", pc.N))
		r.MS = res.First[min(pc.Skip, len(res.First)):]
		return err
	})
	if err != nil {
		return nil, err
	}
	row.Name, row.File = fmt.Sprintf("code interpreter, %d back to back, first %d left out", pc.N, pc.Skip), "pools-ci-b2b"
	rows = append(rows, row)
	for i, name := range []string{"after the back-to-back runs", "again (the pool has seen a burst)"} {
		fmt.Printf("  quiet for %s before the burst\n", pc.Quiet)
		select {
		case <-time.After(pc.Quiet):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		row, err = poolsRun(ctx, c, "code-interpreter-v1", func(r *poolsRow) error {
			var run ttiRun
			err := runNodeBench(ctx, c, "bench/ciburst.mjs", &run, fmt.Sprint("BENCH_N=", pc.N))
			r.MS, r.Failed = run.ok(), run.Errors
			return err
		})
		if err != nil {
			return nil, err
		}
		row.Name = fmt.Sprintf("code interpreter, burst of %d after %s quiet, %s", pc.N, pc.Quiet, name)
		row.File = fmt.Sprintf("pools-ci-burst-%d", i+1)
		rows = append(rows, row)
	}
	return rows, nil
}

// poolsRun runs one row with the template's pool counters around it.
func poolsRun(ctx context.Context, c *Config, template string, run func(*poolsRow) error) (*poolsRow, error) {
	r := &poolsRow{Hits: -1, ReadyAtStart: -1}
	if m := poolMetrics(ctx, c, template); m != nil {
		r.ReadyAtStart = int(m["warren_pool_ready"])
	}
	before := poolCounters(ctx, c, template)
	if err := run(r); err != nil {
		return nil, err
	}
	if after := poolCounters(ctx, c, template); before != nil && after != nil {
		r.Hits = after[0] - before[0]
		r.Creates = r.Hits + after[1] - before[1]
	}
	fmt.Printf("  %s: %d timed, p50 %.0f ms\n", template, len(r.MS), percentile(r.MS, 50))
	return r, nil
}

// skipFirst drops the first n iterations, then the failed ones.
func skipFirst(tti []*float64, n int) []float64 {
	var out []float64
	for i, t := range tti {
		if i >= n && t != nil {
			out = append(out, *t)
		}
	}
	return out
}

func printPools(base []float64, rows []*poolsRow) {
	b50 := percentile(base, 50)
	fmt.Printf("\n| warm pools (create → first result), baseline p50 %.1f ms | n | p50 ms | p95 ms | p50 / baseline | p95 / baseline | pool hits | pool ready at start |\n", b50)
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		hits, ready := "—", "—"
		if r.Hits >= 0 {
			hits = fmt.Sprintf("%d of %d", r.Hits, r.Creates)
		}
		if r.ReadyAtStart >= 0 {
			ready = fmt.Sprint(r.ReadyAtStart)
		}
		p50, p95 := percentile(r.MS, 50), percentile(r.MS, 95)
		fmt.Printf("| %s | %d | %.0f | %.0f | %.2fx | %.2fx | %s | %s |\n", r.Name, len(r.MS), p50, p95, p50/b50, p95/b50, hits, ready)
		for i, e := range r.Failed {
			if i == 3 {
				fmt.Printf("  ... and %d more errors\n", len(r.Failed)-3)
				break
			}
			fmt.Printf("  error: %s\n", e)
		}
	}
}

// plotPools draws each row's distribution next to the baseline's, one
// picture per row: pools-*-<runtime>.svg and .png.
func plotPools(c *Config, base []float64, rows []*poolsRow) error {
	for _, r := range rows {
		if len(r.MS) == 0 {
			continue
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, %s", r.Name, c.Runtime)
		p.X.Label.Text = "create → first result (ms, log scale)"
		p.Y.Label.Text = "share of creates"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Top, p.Legend.Left = false, false
		lines := []series{{"baseline: runc run /bin/true", cdf(base)}, {r.Name, cdf(r.MS)}}
		if err := savePlot(p, lines, c.PlotDir, r.File+"-"+c.Runtime); err != nil {
			return err
		}
	}
	return nil
}

// runPools runs, prints and draws the pools' rows.
func runPools(ctx context.Context, c *Config, base []float64) error {
	fmt.Println("warm pools (back to back, and a burst after a quiet minute):")
	rows, err := poolsBench(ctx, c)
	if err != nil {
		return err
	}
	printPools(base, rows)
	if c.PlotDir != "" {
		if err := plotPools(c, base, rows); err != nil {
			return err
		}
	}
	if c.Save != "" {
		return saveReport(c.Save, poolsReport(c, base, rows))
	}
	return nil
}

// poolsReport turns the rows into a saved report with issue 34's targets:
// base back to back p50 ≤ 1x the baseline, the interpreter's ≤ 3x, a
// burst's p95 ≤ 2 s.
func poolsReport(c *Config, base []float64, rows []*poolsRow) *Report {
	rep := &Report{Label: c.Label, Runtime: c.Runtime, Baseline: base}
	for i, r := range rows {
		row := Row{Name: r.Name, Samples: r.MS}
		switch {
		case i == 0:
			row.TargetX = 1
		case i == 1:
			row.TargetX = 3
		default:
			row.TargetMS, row.TargetP = 2000, 95
		}
		if r.Hits >= 0 {
			row.Note = fmt.Sprintf("pool hits %d of %d creates, %d ready at the start", r.Hits, r.Creates, r.ReadyAtStart)
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep
}
