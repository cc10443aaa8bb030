package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// resumeResult is what bench/resume.mjs prints, in milliseconds.
type resumeResult struct {
	Sizes []struct {
		MB         int       `json:"mb"`
		Pause      []float64 `json:"pause"`
		Checkpoint []float64 `json:"checkpoint"`
		ResumeCmd  []float64 `json:"resumeCmd"`
		Snapshot   []float64 `json:"snapshot"`
	} `json:"sizes"`
	Fork *struct {
		MB       int       `json:"mb"`
		N        int       `json:"n"`
		TotalMS  float64   `json:"totalMs"`
		FirstCmd []float64 `json:"firstCmd"`
		Source   string    `json:"source"`
		IDs      []string  `json:"ids"`
	} `json:"fork"`
	Keep []string `json:"keep"`
}

// resumeBench measures pause, resume after a checkpoint, snapshots and a
// fork at the sizes issue 34 names, and the memory the forks hold, as
// rows for the report.
func resumeBench(ctx context.Context, c *Config, baseline []float64) (*Report, error) {
	env := []string{}
	if c.DataDir != "" && c.backendName() == "runsc" {
		// Only runsc checkpoints (and writes the record's flag); runc's
		// pause is its freezer and has no image to wait for.
		dir := filepath.Join(c.DataDir, "sandboxes", "runsc")
		if _, err := os.Stat(dir); err == nil {
			env = append(env, "BENCH_RECORD_DIR="+dir)
		}
	}
	var r resumeResult
	err := runNodeBench(ctx, c, "bench/resume.mjs", &r, env...)
	defer c.killAll(ctx, r.Keep)
	if err != nil {
		return nil, err
	}
	rep := &Report{Label: c.Label, Runtime: c.Runtime, Baseline: baseline}
	for _, s := range r.Sizes {
		size := sizeName(s.MB)
		rows := []Row{
			{Name: "pause, " + size, Samples: s.Pause, TargetMS: pauseTarget(s.MB)},
			{Name: "pause to memory on disk, " + size, Samples: s.Checkpoint},
			{Name: "resume → first command, " + size, Samples: s.ResumeCmd, TargetX: resumeTarget(s.MB)},
			{Name: "createSnapshot, " + size, Samples: s.Snapshot, TargetMS: snapshotTarget(s.MB)},
		}
		for _, row := range rows {
			if len(row.Samples) > 0 {
				rep.Rows = append(rep.Rows, row)
			}
		}
	}
	if f := r.Fork; f != nil {
		size := sizeName(f.MB)
		rep.Rows = append(rep.Rows,
			Row{Name: fmt.Sprintf("fork of %d, %s, all of them", f.N, size), Samples: []float64{f.TotalMS}, TargetMS: 2000},
			Row{Name: fmt.Sprintf("fork of %d, %s, each fork's first command", f.N, size), Samples: f.FirstCmd, TargetX: 5, TargetP: 95})
		src := pssMiB(f.Source)
		var forks float64
		for _, id := range f.IDs {
			forks += pssMiB(id)
		}
		rep.Rows = append(rep.Rows, Row{Name: fmt.Sprintf("memory of the %d forks (PSS, sum)", f.N), Unit: "MiB", Samples: []float64{forks},
			Note: fmt.Sprintf("the source sandbox alone: %.0f MiB; %d forks sharing one image would hold about that", src, f.N)})
	}
	return rep, nil
}

// pssMiB is the proportional set size of all of sandbox id's host
// processes: shared pages count once across the sandboxes that map them.
func pssMiB(id string) float64 {
	kb := 0
	for _, pid := range sandboxPids(id) {
		kb += pssKB(pid)
	}
	return float64(kb) / 1024
}

func sizeName(mb int) string {
	if mb%1024 == 0 {
		return fmt.Sprintf("%d GiB held", mb/1024)
	}
	return fmt.Sprintf("%d MiB held", mb)
}

// The targets: pause ≤ 200 ms at 100 MiB; resume → first command
// ≤ 3x the baseline at 100 MiB (at 1 GiB: no more than twice the 100 MiB
// figure, which Compare shows); a snapshot of 1 GiB ≤ 1 s.
func pauseTarget(mb int) float64 {
	if mb <= 100 {
		return 200
	}
	return 0
}

func resumeTarget(mb int) float64 {
	if mb <= 100 {
		return 3
	}
	return 0
}

func snapshotTarget(mb int) float64 {
	if mb >= 1024 {
		return 1000
	}
	return 0
}

// killAll kills what a benchmark script left running.
func (c *Config) killAll(ctx context.Context, ids []string) {
	sdk, err := c.sdk()
	if err != nil {
		return
	}
	for _, id := range ids {
		if id != "" {
			_ = sdk.Kill(context.WithoutCancel(ctx), id)
		}
	}
}

// backendName is the server's runtime as its data dir names it: the label
// without a variant suffix such as "-frozen".
func (c *Config) backendName() string {
	for _, rt := range []string{"runsc", "runc"} {
		if strings.HasPrefix(c.Runtime, rt) {
			return rt
		}
	}
	return c.Runtime
}
