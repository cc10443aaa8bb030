package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/bench"
)

// desktopBenchIndex is BenchmarkDesktop's first bridge index: two servers
// (cold and pooled) per runtime.
const desktopBenchIndex = 220

// BenchmarkDesktop measures desktops on each runtime of
// WARREN_E2E_RUNTIMES (desktop/bench.mjs) against baselines taken in the
// same run: @e2b/desktop's create to its first screenshot (p50 of 10)
// against a create of base to its first command, with no pool and with a
// warm pool of desktops; a screenshot's round trip against
// commands.run('true'); and an idle desktop's CPU and memory, without and
// with a stream open. One iteration is the whole script:
//
//	go test ./test/e2e -run '^$' -bench BenchmarkDesktop -benchtime=1x -timeout 60m
func BenchmarkDesktop(b *testing.B) {
	cfg := loadConfigTB(b)
	for i, rt := range cfg.runtimes {
		b.Run(rt, func(b *testing.B) {
			cold := launchServer(b, cfg, serverOpts{index: desktopBenchIndex + 2*i, runtime: rt, args: []string{"--desktop"}})
			for range b.N {
				res := runDesktopBench(b, cfg, cold, "all")
				// A pool of desktops: the pool boots the sandbox, the SDK
				// still starts the X server and XFCE in it.
				pooled := launchServer(b, cfg, serverOpts{index: desktopBenchIndex + 2*i + 1, runtime: rt,
					args: []string{"--desktop", "--pool-templates=desktop", "--pool-size=3"}})
				time.Sleep(20 * time.Second) // let the pool fill
				warm := runDesktopBench(b, cfg, pooled, "creates")
				pooled.stop(b)
				res.PooledCreateMs, res.PooledBaseMs = warm.DesktopCreateMs, warm.BaseCreateMs
				res.report(b, rt)
			}
		})
	}
}

type desktopIdle struct {
	Samples  int     `json:"samples"`
	CPUPct   float64 `json:"cpuPct"`
	CPUCount int     `json:"cpuCount"`
	MemMiB   float64 `json:"memMiB"`
}

type desktopBenchResult struct {
	BaseCreateMs    []float64    `json:"baseCreateMs"`
	DesktopCreateMs []float64    `json:"desktopCreateMs"`
	Shot            []float64    `json:"shot"`
	Run             []float64    `json:"run"`
	Idle            *desktopIdle `json:"idle"`
	IdleStreaming   *desktopIdle `json:"idleStreaming"`
	PooledCreateMs  []float64    `json:"-"`
	PooledBaseMs    []float64    `json:"-"`
}

// report sends the medians and the ratios to b.
func (r desktopBenchResult) report(b *testing.B, rt string) {
	p50 := func(xs []float64) float64 { return bench.Percentile(xs, 50) }
	base, desk := p50(r.BaseCreateMs), p50(r.DesktopCreateMs)
	pbase, pdesk := p50(r.PooledBaseMs), p50(r.PooledCreateMs)
	shot, run := p50(r.Shot), p50(r.Run)
	for name, v := range map[string]float64{
		"base-create-p50-ms": base, "desktop-create-shot-p50-ms": desk, "desktop-create-x-base": desk / base,
		"pooled-base-create-p50-ms": pbase, "pooled-desktop-create-shot-p50-ms": pdesk, "pooled-desktop-x-base": pdesk / pbase,
		"shot-p50-ms": shot, "run-true-p50-ms": run, "shot-x-run": shot / run,
		"idle-cpu-pct": r.Idle.CPUPct, "idle-mem-MiB": r.Idle.MemMiB,
		"idle-stream-cpu-pct": r.IdleStreaming.CPUPct, "idle-stream-mem-MiB": r.IdleStreaming.MemMiB,
	} {
		b.ReportMetric(v, name)
	}
	b.Log(fmt.Sprintf("%s: create to first screenshot p50 %.0f ms vs base create to first command %.0f ms (%.1fx); "+
		"with a pool of 3 desktops %.0f ms vs %.0f ms (%.1fx); screenshot p50 %.0f ms vs commands.run('true') %.0f ms (%.1fx); "+
		"idle: %.2f%% of %d CPUs, %.0f MiB (%d samples); idle with the stream open: %.2f%%, %.0f MiB",
		rt, desk, base, desk/base, pdesk, pbase, pdesk/pbase, shot, run, shot/run,
		r.Idle.CPUPct, r.Idle.CPUCount, r.Idle.MemMiB, r.Idle.Samples, r.IdleStreaming.CPUPct, r.IdleStreaming.MemMiB))
}

func runDesktopBench(b *testing.B, cfg config, srv *server, mode string) desktopBenchResult {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "desktop/bench.mjs")
	cmd.Dir = cfg.e2eDir
	cmd.Env = append(environWithout("E2B_", "E2E_"), "E2E_BENCH_MODE="+mode,
		"E2B_API_KEY="+srv.apiKey, "E2B_API_URL="+srv.url, "E2B_SANDBOX_URL="+srv.url, "E2B_DOMAIN="+cfg.domain)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("node desktop/bench.mjs: %v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
	var res desktopBenchResult
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil {
		b.Fatalf("reading desktop/bench.mjs output %q: %v", stdout.Bytes(), err)
	}
	if len(res.DesktopCreateMs) == 0 || len(res.BaseCreateMs) == 0 || (mode == "all" && (res.Idle == nil || res.IdleStreaming == nil || len(res.Shot) == 0)) {
		b.Fatalf("desktop/bench.mjs measured nothing: %s", stdout.Bytes())
	}
	return res
}
