package envd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cpuSampleWindow is how long /metrics watches /proc/stat to measure CPU use.
const cpuSampleWindow = 100 * time.Millisecond

// metricsResponse is E2B envd's /metrics shape.
type metricsResponse struct {
	Timestamp   int64   `json:"ts"`
	CPUCount    int     `json:"cpu_count"`
	CPUUsedPct  float64 `json:"cpu_used_pct"`
	MemTotal    uint64  `json:"mem_total"`
	MemUsed     uint64  `json:"mem_used"`
	MemCache    uint64  `json:"mem_cache"`
	MemTotalMiB uint64  `json:"mem_total_mib"`
	MemUsedMiB  uint64  `json:"mem_used_mib"`
	DiskUsed    uint64  `json:"disk_used"`
	DiskTotal   uint64  `json:"disk_total"`
}

// metrics reports CPU, memory and root-filesystem usage from /proc and
// statfs, as the sandbox itself sees them.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	m, err := collectMetrics(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func collectMetrics(ctx context.Context) (*metricsResponse, error) {
	pct, err := cpuUsedPct(ctx)
	if err != nil {
		return nil, err
	}
	mem, err := readMeminfo("/proc/meminfo")
	if err != nil {
		return nil, err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs("/", &fs); err != nil {
		return nil, fmt.Errorf("statfs /: %w", err)
	}
	used := mem["MemTotal"] - min(mem["MemAvailable"], mem["MemTotal"])
	return &metricsResponse{
		Timestamp:   time.Now().Unix(),
		CPUCount:    runtime.NumCPU(),
		CPUUsedPct:  math.Round(pct*100) / 100,
		MemTotal:    mem["MemTotal"],
		MemUsed:     used,
		MemCache:    mem["Cached"] + mem["Buffers"],
		MemTotalMiB: mem["MemTotal"] >> 20,
		MemUsedMiB:  used >> 20,
		DiskTotal:   fs.Blocks * uint64(fs.Bsize),
		DiskUsed:    (fs.Blocks - fs.Bfree) * uint64(fs.Bsize),
	}, nil
}

// cpuUsedPct samples the aggregate cpu line of /proc/stat twice and returns
// the busy share of the window, in percent.
func cpuUsedPct(ctx context.Context) (float64, error) {
	busy1, total1, err := readCPUStat()
	if err != nil {
		return 0, err
	}
	select {
	case <-ctx.Done():
		return 0, fmt.Errorf("sampling cpu: %w", ctx.Err())
	case <-time.After(cpuSampleWindow):
	}
	busy2, total2, err := readCPUStat()
	if err != nil {
		return 0, err
	}
	if total2 <= total1 {
		return 0, nil
	}
	return 100 * float64(busy2-busy1) / float64(total2-total1), nil
}

func readCPUStat() (busy, total uint64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("reading /proc/stat: %w", err)
	}
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	fields := strings.Fields(string(line))
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("unexpected /proc/stat cpu line %q", line)
	}
	// user nice system idle iowait irq softirq steal; guest time is
	// already counted in user and nice.
	var idle uint64
	for i, f := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parsing /proc/stat: %w", err)
		}
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return total - idle, total, nil
}

// readMeminfo returns /proc/meminfo values in bytes.
func readMeminfo(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading meminfo: %w", err)
	}
	defer f.Close()
	out := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v *= 1024
		}
		out[key] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading meminfo: %w", err)
	}
	if out["MemTotal"] == 0 {
		return nil, fmt.Errorf("reading meminfo: no MemTotal in %s", path)
	}
	return out, nil
}
