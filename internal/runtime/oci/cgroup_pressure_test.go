package oci

import (
	"testing"
	"time"
)

func TestSomeAvg10(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"some avg10=12.50 avg60=3.00 avg300=1.00 total=123\nfull avg10=99.00 avg60=0.00 avg300=0.00 total=0\n", 12.5, true},
		{"full avg10=99.00 avg60=0.00 avg300=0.00 total=0\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 0, true},
		{"some avg60=3.00\n", 0, false},
		{"", 0, false},
		{"some avg10=x\n", 0, false},
	}
	for _, c := range cases {
		got, err := someAvg10(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("someAvg10(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestUseMeter: a cgroup using every CPU for a long while reads near 100 %,
// one using half of two CPUs near 50 %, an idle one falls towards 0; a
// counter that went back (a new cgroup) starts over.
func TestUseMeter(t *testing.T) {
	start := time.Unix(1000, 0)
	cases := []struct {
		name     string
		nsPerSec uint64 // CPU ns used per second of wall time
		cpus     int
		lo, hi   float64
	}{
		{"all of two CPUs", 2e9, 2, 99, 100},
		{"one of two CPUs", 1e9, 2, 49, 51},
		{"idle", 0, 2, 0, 0.01},
		{"more than there is (clamped)", 9e9, 2, 99, 100},
	}
	for _, c := range cases {
		var m useMeter
		var got float64
		for s := range 120 {
			got = m.add(start.Add(time.Duration(s)*time.Second), uint64(s)*c.nsPerSec, c.cpus)
		}
		if got < c.lo || got > c.hi {
			t.Errorf("%s: %.2f %%, want %v to %v", c.name, got, c.lo, c.hi)
		}
	}
	var m useMeter
	m.add(start, 5e9, 1)
	if got := m.add(start.Add(time.Second), 1e9, 1); got != 0 {
		t.Errorf("after the counter went back: %.2f %%, want 0 until the next reading", got)
	}
}

func TestUseAsPressure(t *testing.T) {
	for use, want := range map[float64]float64{0: 0, 50: 0, 80: 0, 90: 50, 100: 100} {
		if got := useAsPressure(use); got != want {
			t.Errorf("useAsPressure(%v) = %v, want %v", use, got, want)
		}
	}
}
