package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TTIConfig is the ComputeSDK method's shape: how many sandboxes each of
// its runs creates, and the stagger's spacing.
type TTIConfig struct {
	Sequential int
	Staggered  int
	StaggerMS  int
	Burst      int
	// BurstAgain runs the burst a second time once the server's pool for
	// the template is full again: what a warm pool that has seen a burst
	// gives the next one.
	BurstAgain bool
}

// ttiRun is one run of bench/tti.mjs: each iteration's time to
// interactive in ms (NaN where it failed), as the script prints it.
type ttiRun struct {
	Name         string
	TTI          []*float64 `json:"tti"`
	Errors       []string   `json:"errors"`
	WallMS       float64    `json:"wallMs"`
	FirstReadyMS *float64   `json:"firstReadyMs"`
	// Hits and Misses are the server's pool counters over the run; -1
	// when it has no pool metrics (no pools, or not an admin key).
	Hits, Misses int
	ReadyAtStart int
}

// ok returns the successful iterations' times.
func (r *ttiRun) ok() []float64 {
	var out []float64
	for _, t := range r.TTI {
		if t != nil {
			out = append(out, *t)
		}
	}
	return out
}

// ttiBench runs the ComputeSDK method against the server: sequential,
// staggered, burst (and burst again), each started once the template's
// pool is as full as it wants to be.
func ttiBench(ctx context.Context, c *Config) ([]*ttiRun, error) {
	t := c.TTI
	runs := []struct {
		name, mode string
		n          int
	}{
		{fmt.Sprintf("sequential, %d", t.Sequential), "sequential", t.Sequential},
		{fmt.Sprintf("staggered, %d every %d ms", t.Staggered, t.StaggerMS), "staggered", t.Staggered},
		{fmt.Sprintf("burst, %d at once", t.Burst), "burst", t.Burst},
	}
	if t.BurstAgain {
		runs = append(runs, struct {
			name, mode string
			n          int
		}{fmt.Sprintf("burst again, %d at once", t.Burst), "burst", t.Burst})
	}
	var out []*ttiRun
	for _, r := range runs {
		if r.n <= 0 {
			continue
		}
		ready := waitPoolFull(ctx, c, "base", 2*time.Minute)
		before := poolCounters(ctx, c, "base")
		run := &ttiRun{Name: r.name, ReadyAtStart: ready}
		env := []string{"BENCH_MODE=" + r.mode, fmt.Sprint("BENCH_N=", r.n), fmt.Sprint("BENCH_STAGGER_MS=", t.StaggerMS)}
		if err := runNodeBench(ctx, c, "bench/tti.mjs", run, env...); err != nil {
			return nil, err
		}
		after := poolCounters(ctx, c, "base")
		run.Hits, run.Misses = -1, -1
		if before != nil && after != nil {
			run.Hits, run.Misses = after[0]-before[0], after[1]-before[1]
		}
		fmt.Printf("  %s: %d of %d ok, p50 %.0f ms\n", r.name, len(run.ok()), r.n, percentile(run.ok(), 50))
		out = append(out, run)
	}
	return out, nil
}

func printTTI(base []float64, runs []*ttiRun) {
	b50 := percentile(base, 50)
	fmt.Println("\n| time to interactive (create → first command) | ok | p50 ms | p95 ms | p99 ms | wall s | p50 / baseline p50 | pool hits | pool ready at start |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		xs := r.ok()
		hits := "—"
		if r.Hits >= 0 {
			hits = fmt.Sprintf("%d of %d", r.Hits, r.Hits+r.Misses)
		}
		ready := "—"
		if r.ReadyAtStart >= 0 {
			ready = fmt.Sprint(r.ReadyAtStart)
		}
		fmt.Printf("| %s | %d/%d | %.0f | %.0f | %.0f | %.1f | %.2fx | %s | %s |\n", r.Name, len(xs), len(r.TTI),
			percentile(xs, 50), percentile(xs, 95), percentile(xs, 99), r.WallMS/1000, percentile(xs, 50)/b50, hits, ready)
		for i, e := range r.Errors {
			if i == 3 {
				fmt.Printf("  ... and %d more errors\n", len(r.Errors)-3)
				break
			}
			fmt.Printf("  error: %s\n", e)
		}
	}
}

// poolMetrics reads the server's pool gauges and counters for a template
// (summed over runtimes): ready, target, hits, misses. nil when the
// server has none or the key may not read them.
func poolMetrics(ctx context.Context, c *Config, template string) map[string]float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.URL, "/")+"/metrics", nil)
	if err != nil {
		return nil
	}
	req.Header.Set("X-API-KEY", c.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			key, ok := name, false
			for _, l := range m.GetLabel() {
				switch {
				case l.GetName() == "template":
					ok = l.GetValue() == template
				case l.GetName() == "result":
					key += "/" + l.GetValue()
				}
			}
			if !ok {
				continue
			}
			switch {
			case m.GetGauge() != nil:
				out[key] += m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] += m.GetCounter().GetValue()
			}
		}
	}
	if _, ok := out["warren_pool_target"]; !ok {
		return nil
	}
	return out
}

// poolCounters returns the template's pool hits and misses so far.
func poolCounters(ctx context.Context, c *Config, template string) []int {
	m := poolMetrics(ctx, c, template)
	if m == nil {
		return nil
	}
	return []int{int(m["warren_pool_creates_total/hit"]), int(m["warren_pool_creates_total/miss"])}
}

// waitPoolFull waits until the template's pool holds its target, or
// stops growing for 15 s (its memory budget is spent), or for at most
// limit, and returns how many it holds; -1 without pool metrics.
func waitPoolFull(ctx context.Context, c *Config, template string, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	last, grew := -1.0, time.Now()
	for {
		m := poolMetrics(ctx, c, template)
		if m == nil {
			return -1
		}
		ready, target := m["warren_pool_ready"], m["warren_pool_target"]
		if ready != last {
			last, grew = ready, time.Now()
		}
		if ready >= target || time.Since(grew) > 15*time.Second || time.Now().After(deadline) || ctx.Err() != nil {
			return int(math.Round(ready))
		}
		time.Sleep(500 * time.Millisecond)
	}
}
