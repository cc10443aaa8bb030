package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/bench"
)

// BenchmarkJavaKernel measures the code interpreter's Java kernel on each
// runtime of WARREN_E2E_RUNTIMES (bench/java.mjs: a java context's first
// result, a python context's for comparison, and warm runs) and reports
// p50s with their ratios to `runc run /bin/true` timed in the same run.
// One iteration is the whole script; run it with -benchtime=1x.
func BenchmarkJavaKernel(b *testing.B) {
	cfg := loadConfigTB(b)
	for i, rt := range cfg.runtimes {
		b.Run(rt, func(b *testing.B) {
			srv := launchServer(b, cfg, serverOpts{index: cfg.firstIndex + i, runtime: rt})
			for range b.N {
				base, err := bench.BaselineRuncTrue(context.Background(), 20)
				if err != nil {
					b.Fatal(err)
				}
				res := runJavaBench(b, cfg, srv)
				b50 := bench.Percentile(base, 50)
				for _, m := range []struct {
					name string
					xs   []float64
				}{{"java-first", res.JavaFirst}, {"python-first", res.PythonFirst}, {"java-warm", res.JavaRuns}} {
					p50 := bench.Percentile(m.xs, 50)
					b.ReportMetric(p50, m.name+"-p50-ms")
					b.ReportMetric(p50/b50, m.name+"-x-baseline")
				}
				b.ReportMetric(b50, "baseline-p50-ms")
				b.ReportMetric(res.MaxHeapMiB, "java-max-heap-MiB")
				b.Logf("%s: baseline %.1f ms; java first %v; python first %v", rt, b50, res.JavaFirst, res.PythonFirst)
			}
		})
	}
}

type javaBenchResult struct {
	JavaFirst   []float64 `json:"javaFirst"`
	PythonFirst []float64 `json:"pythonFirst"`
	JavaRuns    []float64 `json:"javaRuns"`
	MaxHeapMiB  float64   `json:"javaMaxHeapMiB"`
}

func runJavaBench(b *testing.B, cfg config, srv *server) javaBenchResult {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "bench/java.mjs")
	cmd.Dir = cfg.e2eDir
	cmd.Env = append(environWithout("E2B_", "E2E_"),
		"E2B_API_KEY="+srv.apiKey, "E2B_API_URL="+srv.url, "E2B_SANDBOX_URL="+srv.url, "E2B_DOMAIN="+cfg.domain)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("node bench/java.mjs: %v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
	var res javaBenchResult
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil {
		b.Fatalf("reading bench/java.mjs output %q: %v", stdout.Bytes(), err)
	}
	return res
}
