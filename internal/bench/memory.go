package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// idleMemory creates c.Idle sandboxes through the REST API, lets them settle
// and returns each one's host memory in MiB: the summed proportional set size
// of every host process that belongs to it (its cgroup members, plus runsc's
// sandbox and gofer processes, found by the id in their command line).
func idleMemory(ctx context.Context, c *Config) ([]float64, error) {
	sdk, err := c.sdk()
	if err != nil {
		return nil, err
	}
	var ids []string
	defer func() {
		for _, id := range ids {
			_ = sdk.Kill(context.WithoutCancel(ctx), id)
		}
	}()
	for range c.Idle {
		sb, err := sdk.Create(ctx, "base", warren.CreateOptions{Timeout: 2 * time.Minute})
		if err != nil {
			return nil, fmt.Errorf("bench: creating idle sandbox: %w", err)
		}
		ids = append(ids, sb.ID)
	}
	time.Sleep(3 * time.Second)
	var out []float64
	for _, id := range ids {
		kb := 0
		for _, pid := range sandboxPids(id) {
			kb += pssKB(pid)
		}
		out = append(out, float64(kb)/1024)
	}
	return out, nil
}

// sdk is a client of the measured server.
func (c *Config) sdk() (*warren.Client, error) {
	return warren.New(warren.Config{APIURL: strings.TrimRight(c.URL, "/"), APIKey: c.APIKey, SandboxURL: c.URL})
}

// sandboxPids finds the host processes of one sandbox.
func sandboxPids(id string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cg, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cg, []byte("/warren/"+id)) || bytes.Contains(cmd, []byte(id)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func pssKB(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

func printBench(c *Config, base, cmd []float64, idle []float64) {
	b50 := percentile(base, 50)
	row := func(name string, xs []float64) {
		p50, p95 := percentile(xs, 50), percentile(xs, 95)
		fmt.Printf("| %s | %d | %.1f | %.1f | %.2fx |\n", name, len(xs), p50, p95, p50/b50)
	}
	fmt.Printf("\nwarren bench, runtime %s, %s\n\n", c.Runtime, time.Now().UTC().Format(time.RFC3339))
	fmt.Println("| measurement | n | p50 ms | p95 ms | p50 / baseline p50 |")
	fmt.Println("|---|---|---|---|---|")
	row("baseline: runc run /bin/true", base)
	row("commands.run('true') on a running sandbox", cmd)
	sum := 0.0
	for _, m := range idle {
		sum += m
	}
	if len(idle) > 0 {
		fmt.Printf("\nidle sandbox host memory (PSS of all its processes): %.1f MiB average over %d\n", sum/float64(len(idle)), len(idle))
	}
}
