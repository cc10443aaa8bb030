package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/template/base"
	"github.com/warren-sandbox/warren/internal/template/codeinterp"
)

// ciResult is what bench/runcode.mjs prints, in milliseconds.
type ciResult struct {
	First []float64 `json:"first"`
	Runs  []float64 `json:"runs"`
	// Hits is how many of First took a pooled sandbox (-1: unknown).
	Hits int
}

// codeInterpreterBench measures the code interpreter when the server has
// its template; nil without it.
func codeInterpreterBench(ctx context.Context, c *Config) (*ciResult, error) {
	sdk, err := c.sdk()
	if err != nil {
		return nil, err
	}
	if ok, err := sdk.TemplateExists(ctx, "code-interpreter-v1"); err != nil || !ok {
		return nil, err
	}
	const tpl = "code-interpreter-v1"
	waitPoolFull(ctx, c, tpl, 2*time.Minute)
	before := poolCounters(ctx, c, tpl)
	var res ciResult
	if err := runNodeBench(ctx, c, "bench/runcode.mjs", &res); err != nil {
		return nil, err
	}
	res.Hits = -1
	if after := poolCounters(ctx, c, tpl); before != nil && after != nil {
		res.Hits = after[0] - before[0]
	}
	return &res, nil
}

func printCodeInterpreterBench(baseline []float64, r *ciResult) {
	if r == nil {
		fmt.Println("\n(no code-interpreter-v1 template: code interpreter not measured)")
		return
	}
	b50 := percentile(baseline, 50)
	fmt.Println("\n| code interpreter | n | p50 ms | p95 ms | p50 / baseline p50 |")
	fmt.Println("|---|---|---|---|---|")
	for _, row := range []struct {
		name string
		xs   []float64
	}{
		{"Sandbox.create() → first runCode('1+1') result, one every 2 s" + poolHits(r.Hits, len(r.First)+1), r.First},
		{"runCode('1+1') on a warm context", r.Runs},
	} {
		p50 := percentile(row.xs, 50)
		fmt.Printf("| %s | %d | %.1f | %.1f | %.2fx |\n", row.name, len(row.xs), p50, percentile(row.xs, 95), p50/b50)
	}
	if _, m, err := codeinterp.Inspect(codeinterp.Options{}); err == nil {
		_, bm, _ := base.Inspect(base.Options{})
		fmt.Printf("\ntemplate size on disk: code-interpreter-v1 %.0f MiB", float64(m.SizeBytes)/(1<<20))
		if bm != nil {
			fmt.Printf(", base %.0f MiB", float64(bm.SizeBytes)/(1<<20))
		}
		fmt.Println()
	}
}

// poolHits says how many of the script's n creates (one more than it
// times: the warm context's) the pool served, when known.
func poolHits(hits, n int) string {
	if hits < 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d from the pool)", hits, n)
}
