package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// idleMemory creates c.Idle sandboxes through the REST API, lets them settle
// and returns each one's host memory in MiB: the summed proportional set size
// of every host process that belongs to it (its cgroup members, plus runsc's
// sandbox and gofer processes, found by the id in their command line).
func idleMemory(ctx context.Context, c *Config) ([]float64, error) {
	var ids []string
	defer func() {
		for _, id := range ids {
			_ = apiCall(ctx, c, http.MethodDelete, "/sandboxes/"+id, nil, nil)
		}
	}()
	for range c.Idle {
		var sb struct {
			SandboxID string `json:"sandboxID"`
		}
		if err := apiCall(ctx, c, http.MethodPost, "/v2/sandboxes", map[string]any{"templateID": "base", "timeout": 120}, &sb); err != nil {
			return nil, fmt.Errorf("bench: creating idle sandbox: %w", err)
		}
		ids = append(ids, sb.SandboxID)
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

func apiCall(ctx context.Context, c *Config, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.URL, "/")+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-KEY", c.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
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
