package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/internal/bench"
)

// benchCommand is `warren bench`: it measures a running server (see
// docs/benchmarks.md).
func benchCommand(c *bench.Config) *cobra.Command {
	var compare []string
	cmd := &cobra.Command{
		Use:     "bench [flags]",
		Short:   "measure a running server against a runc baseline",
		GroupID: "server",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(compare) > 0 {
				if len(compare) != 2 {
					return fmt.Errorf("--compare takes two saved reports, BEFORE.json,AFTER.json")
				}
				return bench.Compare(compare[0], compare[1], c.PlotDir)
			}
			return bench.Run(cmd.Context(), c)
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&compare, "compare", nil, "BEFORE.json,AFTER.json: print two reports saved with --save side by side, each as ratios to its own baseline (with --plot-dir, a CDF per row); measures nothing")
	fs.StringVar(&c.URL, "api-url", os.Getenv("E2B_API_URL"), "server URL (E2B_API_URL)")
	fs.StringVar(&c.APIKey, "api-key", os.Getenv("E2B_API_KEY"), "API key (E2B_API_KEY)")
	fs.StringVar(&c.NodeDir, "node-dir", "test/e2e", "directory with node_modules/e2b and bench/tti.mjs")
	fs.StringVar(&c.Rootfs, "rootfs", "", "rootfs for the runc baseline (default: the cached base template)")
	fs.StringVar(&c.Runtime, "runtime", "", "label for the server's runtime in the report")
	fs.IntVar(&c.Baseline, "baseline-runs", 20, "runc run /bin/true repetitions")
	fs.IntVar(&c.TTI.Sequential, "seq", 100, "time to interactive: sandboxes created one after another (0: skip)")
	fs.IntVar(&c.TTI.Staggered, "staggered", 100, "time to interactive: sandboxes launched --stagger-ms apart (0: skip)")
	fs.IntVar(&c.TTI.StaggerMS, "stagger-ms", 200, "time between the staggered launches")
	fs.IntVar(&c.TTI.Burst, "burst", 100, "time to interactive: sandboxes launched at once (0: skip)")
	fs.BoolVar(&c.TTI.BurstAgain, "burst-again", true, "run the burst a second time once the server's pool is full again")
	fs.StringVar(&c.PlotDir, "plot-dir", "", "write the pictures (time-to-interactive CDF; with --density the density curve) here as SVG and PNG")
	fs.IntVar(&c.Cmd, "cmd", 100, "commands.run('true') repetitions on a warm sandbox")
	fs.IntVar(&c.Idle, "idle", 5, "idle sandboxes whose host memory is measured")
	fs.StringVar(&c.DataDir, "data-dir", "", "the server's --data-dir, to measure the disk of paused sandboxes and forks")
	fs.BoolVar(&c.Pause, "pause", true, "measure pause, resume and fork (BENCH_PAUSE_MB sets the sizes)")
	fs.BoolVar(&c.OnlyPause, "only-pause", false, "measure only the baseline and pause, resume and fork")
	fs.BoolVar(&c.OnlyResume, "only-resume", false, "measure only the baseline and pause, resume after a checkpoint, snapshots and a fork at 100 MiB and 1 GiB held (BENCH_RESUME_MB, BENCH_FORK_MB); pass --data-dir so runsc's resumes wait for the memory image")
	fs.StringVar(&c.Label, "label", "", "name of this run in a saved report (e.g. before, after)")
	fs.StringVar(&c.Save, "save", "", "with --only-resume or --only-pools: write the rows and the baseline's samples here as JSON, for `warren bench --compare`")
	fs.BoolVar(&c.PoolsRows, "pools", true, "measure the warm pools: creates back to back (base, code interpreter) and a burst of interpreter creates after a quiet minute, twice")
	fs.BoolVar(&c.OnlyPools, "only-pools", false, "measure only the baseline and the warm pools' rows")
	fs.IntVar(&c.Pools.N, "pools-n", 20, "with --pools: creates per row")
	fs.IntVar(&c.Pools.Skip, "pools-skip", 5, "with --pools: back-to-back creates left out at the start (the pool's warm-up)")
	fs.DurationVar(&c.Pools.Quiet, "pools-quiet", time.Minute, "with --pools: the quiet before each burst")
	fs.BoolVar(&c.Templates, "templates", true, "measure template builds and creates from a 1.1 GiB template")
	fs.BoolVar(&c.OnlyTpl, "only-templates", false, "measure only the baseline and templates")
	fs.IntVar(&c.Busy.Busy, "busy", 0, "measure only busy neighbours: a command in an idle sandbox and cold creates, quiet and then with this many sandboxes spinning every vCPU; any failure fails the run")
	fs.IntVar(&c.Busy.Commands, "busy-commands", 50, "with --busy: commands timed in the idle sandbox per phase")
	fs.IntVar(&c.Busy.Creates, "busy-creates", 5, "with --busy: cold creates timed per phase, one after another")
	fs.IntVar(&c.Density.Max, "density", 0, "measure only density: create this many sandboxes, one after another, and report their cost as they add up")
	fs.DurationVar(&c.Density.IdleWindow, "idle-window", 30*time.Second, "with --density: how long idle CPU is measured at each step")
	fs.IntVar(&c.Density.MemFloorMB, "mem-floor-mb", 2048, "with --density: stop creating when the host has less memory available")
	fs.StringVar(&c.Density.Bridge, "bridge", "", "with --density: the server's --bridge, to check its ports, netns and nftables sets are reclaimed")
	_ = cmd.MarkFlagDirname("node-dir")
	_ = cmd.MarkFlagDirname("plot-dir")
	return cmd
}
