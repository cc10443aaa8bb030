package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// BenchmarkClusterCreate measures create throughput through one API
// process with 1, 2 and 3 nodes (each in its own netns, as in TestCluster):
// K sandboxes of template base by C concurrent clients, timed until the
// last create answers, then killed (untimed). It reports sandboxes/s and,
// for 2 and 3 nodes, the ratio to 1 node measured in the same run (the
// mean of its runs: with -count, go test runs each size count times in a
// row). The cluster grows in place (one Postgres, one API; a node is added
// between the sizes), so no run pays a start-up. All nodes share this
// machine's CPUs and disk: the ratio shows what spreading creates over
// nodes adds or costs here, not what more machines would give.
//
//	WARREN_BENCH_CLUSTER_K (default 24), WARREN_BENCH_CLUSTER_C (default 8)
func BenchmarkClusterCreate(b *testing.B) {
	cfg := loadConfigTB(b)
	k, conc := envInt(b, "WARREN_BENCH_CLUSTER_K", 24), envInt(b, "WARREN_BENCH_CLUSTER_C", 8)
	c := startClusterNodes(b, cfg, 1)
	cl := goClient(b, cfg, c.startAPI(b))
	var baseSum float64 // nodes=1 rates, summed over -count runs
	var baseRuns int
	for n := 1; n <= 3; n++ {
		if n > 1 {
			c.addNode(b)
			c.wantAlive(b, cl, nil)
		}
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			var created time.Duration
			for range b.N {
				d, ids := createBatch(b, cl, k, conc)
				created += d
				killAll(b, cl, ids)
			}
			rate := float64(k*b.N) / created.Seconds()
			b.ReportMetric(rate, "sandboxes/s")
			if n == 1 {
				baseSum, baseRuns = baseSum+rate, baseRuns+1
			} else if baseRuns > 0 {
				b.ReportMetric(rate/(baseSum/float64(baseRuns)), "x-vs-1-node")
			}
		})
	}
}

// createBatch creates k sandboxes with conc clients at once and returns
// how long they took and their ids; any failed create fails b.
func createBatch(b *testing.B, cl *warren.Client, k, conc int) (time.Duration, []string) {
	ctx := context.Background()
	jobs := make(chan int, k)
	for i := range k {
		jobs <- i
	}
	close(jobs)
	ids, errs := make([]string, k), make([]error, k)
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				sb, err := cl.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
				if err != nil {
					errs[i] = err
					continue
				}
				ids[i] = sb.ID
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	for _, err := range errs {
		if err != nil {
			killAll(b, cl, ids)
			b.Fatalf("create: %v", err)
		}
	}
	return d, ids
}

// killAll kills the sandboxes of ids ("" skipped), 8 at a time.
func killAll(b testing.TB, cl *warren.Client, ids []string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, id := range ids {
		if id == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := cl.Kill(context.Background(), id); err != nil {
				b.Errorf("kill %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
}

func envInt(b testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
