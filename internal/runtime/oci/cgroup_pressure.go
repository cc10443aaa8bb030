package oci

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// CPUPressure reports how short of CPU this backend's sandboxes were over
// the last 10 s, in %, from the cgroup parent they all live under, so
// that unrelated processes on the host do not count (unlike
// /proc/pressure/cpu). Where the kernel keeps pressure per cgroup (the
// unified hierarchy, when the sandboxes are in it) it is PSI's "some
// avg10": the share of time some sandbox task waited for a CPU. On a
// cgroup v1 host, which keeps no such figure, it is read from the share
// of the host's CPUs the sandboxes used (cpuacct), smoothed over 10 s:
// sandboxes that take every CPU there is are taken to want more, so the
// figure is 0 up to 80 % of the CPUs used and rises to 100 at all of them
// (90 % used reads 50).
func (b *Backend) CPUPressure() (float64, error) {
	if b.cg == nil {
		return 0, fmt.Errorf("no cgroups: %w", errdefs.ErrNotImplemented)
	}
	if b.cg.unified != "" {
		data, err := os.ReadFile(filepath.Join(b.cg.unified, b.opts.CgroupParent, "cpu.pressure"))
		if err == nil {
			return someAvg10(string(data))
		}
	}
	dir := b.cg.controllerDir("cpuacct", b.opts.CgroupParent)
	if b.cg.v2 || dir == "" {
		// No sandbox has run yet (the parent is made with the first).
		return 0, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage"))
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the sandboxes' CPU use: %w", err)
	}
	ns, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing cpuacct.usage %q: %w", data, err)
	}
	return useAsPressure(b.cpuUse.add(time.Now(), ns, runtime.NumCPU())), nil
}

// useAsPressure maps the share of the CPUs used (%) to a figure that reads
// like PSI's: nothing below fullUse, 100 at every CPU.
func useAsPressure(use float64) float64 {
	return max(0, (use-fullUse)*100/(100-fullUse))
}

// fullUse is the share of the host's CPUs (%) past which the sandboxes
// are taken to be short of CPU.
const fullUse = 80

// useMeter smooths the share of the host's CPUs a cgroup used, from its
// cumulative cpuacct.usage read at whatever moments someone asks.
type useMeter struct {
	mu      sync.Mutex
	at      time.Time
	ns      uint64
	percent float64
}

// useWindow is the time constant of the smoothing, as PSI's avg10.
const useWindow = 10 * time.Second

// add takes a reading (cumulative ns of CPU at now) and returns the
// smoothed use, in % of cpus.
func (m *useMeter) add(now time.Time, ns uint64, cpus int) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.at.IsZero() || ns < m.ns || !now.After(m.at) {
		m.at, m.ns = now, ns
		return m.percent
	}
	dt := now.Sub(m.at)
	rate := 100 * float64(ns-m.ns) / float64(dt.Nanoseconds()) / float64(max(cpus, 1))
	w := 1 - math.Exp(-dt.Seconds()/useWindow.Seconds())
	m.percent += w * (min(rate, 100) - m.percent)
	m.at, m.ns = now, ns
	return m.percent
}

// someAvg10 reads the avg10 of a PSI file's "some" line.
func someAvg10(psi string) (float64, error) {
	for _, line := range strings.Split(psi, "\n") {
		rest, ok := strings.CutPrefix(line, "some ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(f, "avg10="); ok {
				return strconv.ParseFloat(v, 64)
			}
		}
	}
	return 0, fmt.Errorf("no 'some avg10' in %q", psi)
}
