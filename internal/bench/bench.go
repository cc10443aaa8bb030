// Package bench is the harness behind `warren bench`: it drives a running
// server with the official npm SDK (test/e2e/bench/*.mjs) and reports each
// figure as a ratio to a runc baseline measured in the same run.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// Config is what `warren bench` measures and against which server.
type Config struct {
	URL       string
	APIKey    string
	NodeDir   string
	Rootfs    string
	Runtime   string
	Baseline  int
	TTI       TTIConfig
	Cmd       int
	Idle      int
	DataDir   string
	Pause     bool
	OnlyPause bool
	Templates bool
	OnlyTpl   bool
	// OnlyResume runs only the baseline and issue 34's pause, resume,
	// snapshot and fork rows.
	OnlyResume bool
	// Label names the run in a saved report ("before", "after").
	Label string
	// Save, when set, is where the run's rows go as JSON, for
	// `warren bench --compare`.
	Save string
	// Pools runs the warm pools' rows (backtoback.go); OnlyPools only
	// those and the baseline.
	Pools     PoolsConfig
	PoolsRows bool
	OnlyPools bool
	// PlotDir, when set, is where the pictures go (SVG and PNG).
	PlotDir string
	// Density, when Max is set, runs only the density benchmark.
	Density DensityConfig
	// Busy, when Busy is set, runs only the busy-neighbours benchmark.
	Busy BusyConfig
}

// Run measures a running server: create-to-first-command and command
// round trips through the official npm SDK, idle memory, the code
// interpreter, pause/resume/fork and template builds, each next to the
// baseline `runc run /bin/true` measured in the same run, and prints the
// figures as ratios to that baseline.
func Run(ctx context.Context, c *Config) error {
	if c.URL == "" || c.APIKey == "" {
		return errors.New("bench: set E2B_API_URL and E2B_API_KEY (or --url, --api-key)")
	}
	if c.Density.Max > 0 {
		return densityBench(ctx, c, c.Density)
	}
	if c.Busy.Busy > 0 {
		return busyBench(ctx, c, c.Busy)
	}
	base, err := baselineRuncTrue(ctx, c)
	if err != nil {
		return err
	}
	if c.OnlyResume {
		return report(c, base, func() (*Report, error) { return resumeBench(ctx, c, base) })
	}
	if c.OnlyPause || c.OnlyTpl || c.OnlyPools {
		fmt.Printf("baseline `runc run /bin/true`: p50 %.1f ms over %d runs\n", percentile(base, 50), len(base))
		if c.OnlyPools {
			return runPools(ctx, c, base)
		}
		if c.OnlyTpl {
			return templateBench(ctx, c, base)
		}
		return pauseBench(ctx, c, base)
	}
	// Commands first: the bursts below leave the host refilling pools
	// and reclaiming a hundred sandboxes for a while.
	var cmd ttiRun
	if err := runNodeBench(ctx, c, "bench/tti.mjs", &cmd, "BENCH_MODE=cmd", fmt.Sprint("BENCH_N=", c.Cmd)); err != nil {
		return err
	}
	fmt.Println("time to interactive, ComputeSDK's method (sequential, staggered, burst):")
	tti, err := ttiBench(ctx, c)
	if err != nil {
		return err
	}
	ci, err := codeInterpreterBench(ctx, c)
	if err != nil {
		return err
	}
	idle, err := idleMemory(ctx, c)
	if err != nil {
		return err
	}
	printBench(c, base, cmd.ok(), idle)
	printTTI(base, tti)
	printCodeInterpreterBench(base, ci)
	if c.PlotDir != "" {
		if err := plotTTI(c, base, tti); err != nil {
			return err
		}
	}
	if c.PoolsRows {
		if err := runPools(ctx, c, base); err != nil {
			return err
		}
	}
	if c.Pause {
		if err := pauseBench(ctx, c, base); err != nil {
			return err
		}
	}
	if c.Templates {
		return templateBench(ctx, c, base)
	}
	return nil
}

// report runs one report's benchmark, prints it and saves it with --save.
func report(c *Config, base []float64, run func() (*Report, error)) error {
	fmt.Printf("baseline `runc run /bin/true`: p50 %.1f ms over %d runs\n", percentile(base, 50), len(base))
	rep, err := run()
	if err != nil {
		return err
	}
	printReport(rep)
	if c.Save != "" {
		return saveReport(c.Save, rep)
	}
	return nil
}

// runNodeBench runs one of the SDK benchmark scripts, with env added to
// the server's address and key, and decodes its JSON.
func runNodeBench(ctx context.Context, c *Config, script string, out any, env ...string) error {
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = c.NodeDir
	cmd.Env = append(append(os.Environ(),
		"E2B_API_URL="+c.URL, "E2B_SANDBOX_URL="+c.URL, "E2B_API_KEY="+c.APIKey), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("bench: node %s: %w\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout), out); err != nil {
		return fmt.Errorf("bench: reading node output %q: %w", stdout, err)
	}
	return nil
}

// baselineRuncTrue times `runc run` of /bin/true in a bundle over the same
// rootfs: the cost of a container with nothing else (no network, no envd).
func baselineRuncTrue(ctx context.Context, c *Config) ([]float64, error) {
	rootfs := c.Rootfs
	if rootfs == "" {
		matches, _ := filepath.Glob("/var/cache/warren/templates/base-*/rootfs")
		if len(matches) == 0 {
			return nil, errors.New("bench: no base template in /var/cache/warren; pass --rootfs")
		}
		rootfs = matches[len(matches)-1]
	}
	dir, err := os.MkdirTemp("", "warren-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if out, err := exec.CommandContext(ctx, "runc", "spec", "--bundle", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bench: runc spec: %w: %s", err, out)
	}
	if err := patchBaselineSpec(filepath.Join(dir, "config.json"), rootfs); err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "state")
	var times []float64
	for i := range c.Baseline {
		id := fmt.Sprintf("warren-bench-%d-%d", os.Getpid(), i)
		start := time.Now()
		out, err := exec.CommandContext(ctx, "runc", "--root", root, "run", "--bundle", dir, id).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("bench: runc run: %w: %s", err, out)
		}
		times = append(times, float64(time.Since(start).Microseconds())/1000)
	}
	return times, nil
}

func patchBaselineSpec(path, rootfs string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return err
	}
	spec["root"] = map[string]any{"path": rootfs, "readonly": true}
	proc := spec["process"].(map[string]any)
	proc["terminal"] = false
	proc["args"] = []string{"/bin/true"}
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(p/100*float64(len(s)-1) + 0.5)
	return s[i]
}

// BaselineRuncTrue times n runs of `runc run /bin/true` over the base
// template's rootfs (milliseconds), for benchmarks outside Run that report
// ratios to the same baseline.
func BaselineRuncTrue(ctx context.Context, n int) ([]float64, error) {
	return baselineRuncTrue(ctx, &Config{Baseline: n})
}

// Percentile is the p-th percentile of xs (nearest rank; 0 when empty).
func Percentile(xs []float64, p float64) float64 { return percentile(xs, p) }
