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

// BenchmarkVolumes measures volumes on each runtime of WARREN_E2E_RUNTIMES
// (volume/bench.mjs) against baselines taken in the same run: cold
// creates (no pool) with one volume mounted vs without (target <= 1.1x),
// sequential write and read of 256 MiB inside a sandbox on the volume vs
// on its own disk (target >= 0.8x), and 10k small-file creates, volume vs
// own disk. One iteration is the whole script; run it with -benchtime=1x:
//
//	go test ./test/e2e -run '^$' -bench BenchmarkVolumes -benchtime=1x -timeout 60m
func BenchmarkVolumes(b *testing.B) {
	cfg := loadConfigTB(b)
	for i, rt := range cfg.runtimes {
		b.Run(rt, func(b *testing.B) {
			srv := launchServer(b, cfg, serverOpts{index: volumeBenchIndex + i, runtime: rt, args: []string{"--volume-size-mb=1024"}})
			requireVolumeAPI(b, srv)
			for range b.N {
				res := runVolumeBench(b, cfg, srv)
				res.report(b, rt)
			}
		})
	}
}

// volumeIO is one round of bench.mjs's throughput() in one directory.
type volumeIO struct {
	WriteMBps    float64 `json:"writeMBps"`
	ReadMBps     float64 `json:"readMBps"`
	FilesPerSec  float64 `json:"filesPerSec"`
	CacheDropped bool    `json:"cacheDropped"`
	HostDropped  bool    `json:"hostCacheDropped"`
}

type volumeBenchResult struct {
	CreateMs       []float64  `json:"createMs"`
	CreateVolumeMs []float64  `json:"createVolumeMs"`
	Disk           []volumeIO `json:"disk"`
	Volume         []volumeIO `json:"volume"`
}

// report sends the medians and the ratios to b.
func (r volumeBenchResult) report(b *testing.B, rt string) {
	create, withVol := bench.Percentile(r.CreateMs, 50), bench.Percentile(r.CreateVolumeMs, 50)
	b.ReportMetric(create, "create-p50-ms")
	b.ReportMetric(withVol, "create-volume-p50-ms")
	b.ReportMetric(withVol/create, "create-volume-x")
	pick := func(xs []volumeIO, f func(volumeIO) float64) float64 {
		vs := make([]float64, len(xs))
		for i, x := range xs {
			vs[i] = f(x)
		}
		return bench.Percentile(vs, 50)
	}
	line := fmt.Sprintf("%s: create p50 %.0f ms, with a volume %.0f ms (%.2fx)", rt, create, withVol, withVol/create)
	for _, m := range []struct {
		name string
		f    func(volumeIO) float64
	}{
		{"write-MBps", func(x volumeIO) float64 { return x.WriteMBps }},
		{"read-MBps", func(x volumeIO) float64 { return x.ReadMBps }},
		{"files-per-s", func(x volumeIO) float64 { return x.FilesPerSec }},
	} {
		disk, vol := pick(r.Disk, m.f), pick(r.Volume, m.f)
		b.ReportMetric(disk, "disk-"+m.name)
		b.ReportMetric(vol, "volume-"+m.name)
		b.ReportMetric(vol/disk, m.name+"-x-disk")
		line += fmt.Sprintf("; %s disk %.0f, volume %.0f (%.2fx)", m.name, disk, vol, vol/disk)
	}
	if len(r.Disk) > 0 {
		line += fmt.Sprintf("; page cache dropped: host %v, in the sandbox %v", r.Disk[0].HostDropped, r.Disk[0].CacheDropped)
	}
	b.Log(line)
}

func runVolumeBench(b *testing.B, cfg config, srv *server) volumeBenchResult {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "volume/bench.mjs")
	cmd.Dir = cfg.e2eDir
	cmd.Env = append(environWithout("E2B_", "E2E_"), "E2E_SDK=e2b",
		"E2B_API_KEY="+srv.apiKey, "E2B_API_URL="+srv.url, "E2B_SANDBOX_URL="+srv.url,
		"E2B_VOLUME_API_URL="+srv.url, "E2B_DOMAIN="+cfg.domain)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("node volume/bench.mjs: %v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
	var res volumeBenchResult
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil {
		b.Fatalf("reading volume/bench.mjs output %q: %v", stdout.Bytes(), err)
	}
	if len(res.CreateMs) == 0 || len(res.Disk) == 0 || len(res.Disk) != len(res.Volume) {
		b.Fatalf("volume/bench.mjs measured nothing: %s", stdout.Bytes())
	}
	return res
}
