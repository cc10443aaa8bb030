package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
	"github.com/warren-sandbox/warren/pkg/warren"
	_ "github.com/warren-sandbox/warren/pkg/warren/dockerfile" // BuildDockerfile's converter
)

// benchDockerfile is "a small Python template": a virtualenv, the app's
// files and their bytecode. NONCE makes the first build cold.
const benchDockerfile = `FROM base
ARG NONCE
RUN echo "$NONCE" > /etc/bench-nonce && python3 -m venv /opt/venv
COPY app/ /opt/app/
RUN /opt/venv/bin/python -m compileall -q /opt/app
ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["python3", "/opt/app/main.py"]
`

// largeDockerfile adds 1.1 GiB of incompressible data to base.
const largeDockerfile = `FROM base
RUN head -c 1100M /dev/urandom > /opt/large.bin
`

// templateBench measures a cold build, a cached rebuild and a rebuild
// after one changed line of a small Python template, and the time from
// create to a first command for base and for a 1.1 GiB template.
func templateBench(ctx context.Context, c *Config, base []float64) error {
	dir, err := os.MkdirTemp("", "warren-bench-tpl-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "app"), 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"Dockerfile": benchDockerfile, "Large": largeDockerfile,
		"app/main.py": "from util import answer\nprint(answer())\n", "app/util.py": "def answer():\n    return 42\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	cl, err := warren.New(warren.Config{APIURL: c.URL, APIKey: c.APIKey})
	if err != nil {
		return err
	}
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	args := map[string]string{"NONCE": hex.EncodeToString(nonce)}
	b50 := percentile(base, 50)
	fmt.Printf("\n### templates (baseline `runc run /bin/true` p50 %.1f ms)\n", b50)
	for _, step := range []struct {
		label string
		edit  func() error
	}{
		{"cold build", nil},
		{"cached rebuild (nothing changed)", nil},
		{"rebuild after one changed line of app/util.py", func() error {
			return os.WriteFile(filepath.Join(dir, "app/util.py"), []byte("def answer():\n    return 43\n"), 0o644)
		}},
	} {
		if step.edit != nil {
			if err := step.edit(); err != nil {
				return err
			}
		}
		took, cached, err := timeBuild(ctx, cl, dir, "Dockerfile", "bench-python", args)
		if err != nil {
			return fmt.Errorf("bench: %s: %w", step.label, err)
		}
		fmt.Printf("%-48s %8.0f ms  (%.0fx baseline; %d of 5 steps cached)\n", step.label, ms(took), ms(took)/b50, cached)
	}
	took, _, err := timeBuild(ctx, cl, dir, "Large", "bench-large", nil)
	if err != nil {
		return fmt.Errorf("bench: large template: %w", err)
	}
	fmt.Printf("%-48s %8.0f ms (once per data dir; cached after)\n", "build of a 1.1 GiB template", ms(took))
	return createBench(ctx, c, b50)
}

// timeBuild builds a Dockerfile of dir and returns how long it took and
// how many steps were cache hits.
func timeBuild(ctx context.Context, cl *warren.Client, dir, file, name string, args map[string]string) (time.Duration, int, error) {
	cached := 0
	start := time.Now()
	_, err := cl.BuildDockerfile(ctx, warren.DockerfileBuild{Name: name, Dir: dir, Dockerfile: filepath.Join(dir, file), BuildArgs: args,
		PollInterval: 10 * time.Millisecond, // the figures' resolution
		OnLog: func(e warren.BuildLogEntry) {
			if e.Message == "CACHED" {
				cached++
			}
		}})
	return time.Since(start), cached, err
}

// templateCreates is how many creates from each template createBench times.
const templateCreates = 20

// createBench times create-to-first-command from base and from the large
// template, alternating so both see the same machine.
func createBench(ctx context.Context, c *Config, b50 float64) error {
	sc := &selftest.Client{URL: c.URL, APIKey: c.APIKey, HTTP: &http.Client{}}
	times := map[string][]float64{}
	for range templateCreates {
		for _, tpl := range []string{"base", "bench-large"} {
			start := time.Now()
			sb, err := sc.Create(ctx, tpl, nil)
			if err != nil {
				return err
			}
			res, err := sb.Run(ctx, "", "test -s /opt/large.bin || true")
			took := time.Since(start)
			sb.Kill(ctx)
			if err != nil || res.ExitCode != 0 {
				return fmt.Errorf("bench: command in %s: %v %v", tpl, res, err)
			}
			times[tpl] = append(times[tpl], ms(took))
		}
	}
	bp, lp := percentile(times["base"], 50), percentile(times["bench-large"], 50)
	fmt.Printf("create to first command, base        p50 %6.1f ms (%.2fx baseline)\n", bp, bp/b50)
	fmt.Printf("create to first command, 1.1 GiB     p50 %6.1f ms (%.2fx baseline, %.2fx base)\n", lp, lp/b50, lp/bp)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
