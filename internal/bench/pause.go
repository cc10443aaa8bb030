package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// pauseResult is what bench/pause.mjs prints, in milliseconds.
type pauseResult struct {
	Sizes []struct {
		MB        int       `json:"mb"`
		Pause     []float64 `json:"pause"`
		Resume    []float64 `json:"resume"`
		ResumeCmd []float64 `json:"resumeCmd"`
	} `json:"sizes"`
	Fork *struct {
		N   int      `json:"n"`
		MS  float64  `json:"ms"`
		IDs []string `json:"ids"`
	} `json:"fork"`
	Keep struct {
		Paused string `json:"paused"`
		MB     int    `json:"mb"`
	} `json:"keep"`
}

// pauseBench measures pause, resume and fork, then (with --data-dir) the
// disk a paused sandbox and each fork use, and kills what the script left.
func pauseBench(ctx context.Context, c *Config, baseline []float64) error {
	var r pauseResult
	if err := runNodeBench(ctx, c, "bench/pause.mjs", &r); err != nil {
		return err
	}
	defer func() {
		ids := []string{r.Keep.Paused}
		if r.Fork != nil {
			ids = append(ids, r.Fork.IDs...)
		}
		c.killAll(ctx, ids)
	}()
	b50 := percentile(baseline, 50)
	fmt.Printf("\n| pause / resume (%s) | cycles | pause p50 ms | resume p50 ms | resume → first command p50 ms | resume p50 / baseline p50 |\n", c.Runtime)
	fmt.Println("|---|---|---|---|---|---|")
	for _, s := range r.Sizes {
		res := percentile(s.Resume, 50)
		fmt.Printf("| process holding %d MiB | %d | %.0f | %.0f | %.0f | %.2fx |\n", s.MB, len(s.Pause),
			percentile(s.Pause, 50), res, percentile(s.ResumeCmd, 50), res/b50)
	}
	if r.Fork != nil {
		fmt.Printf("\nfork of %d from a sandbox holding %d MiB: %.0f ms in all, %.0f ms per fork\n",
			r.Fork.N, r.Keep.MB, r.Fork.MS, r.Fork.MS/float64(r.Fork.N))
	}
	if c.DataDir == "" {
		fmt.Println("(pass --data-dir to measure disk use)")
		return nil
	}
	dir := filepath.Join(c.DataDir, "sandboxes", c.Runtime)
	paused := filepath.Join(dir, r.Keep.Paused)
	fmt.Printf("\ndisk of the paused sandbox: writable layer %s, memory image %s\n",
		mib(duBytes(filepath.Join(paused, "upper"))), mib(duBytes(filepath.Join(paused, "checkpoint"))))
	if r.Fork != nil {
		var total int64
		for _, id := range r.Fork.IDs {
			total += duBytes(filepath.Join(dir, id, "upper"))
		}
		fmt.Printf("disk per fork (its own writable layer): %s on average; the shared snapshot layers: %s\n",
			mib(total/int64(len(r.Fork.IDs))), mib(duBytes(filepath.Join(c.DataDir, "snapshots"))))
	}
	return nil
}

// duBytes is the allocated size of the files under dir (0 if absent).
func duBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if st, ok := statBlocks(fi); ok {
				n += st
			}
		}
		return nil
	})
	return n
}

func mib(n int64) string {
	if n < 1<<20 {
		return strings.TrimSuffix(fmt.Sprintf("%.0f KiB", float64(n)/1024), ".0")
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// statBlocks is the allocated size of a file, which for a sparse memory
// image is less than its length.
func statBlocks(fi os.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Blocks * 512, true
}
