package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRowVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  Row
		b50  float64
		want string
	}{
		{"ratio met", Row{Samples: []float64{50, 60, 70}, TargetX: 3}, 20, "p50 ≤ 3x: met"},
		{"ratio not met", Row{Samples: []float64{50, 61, 70}, TargetX: 3}, 20, "p50 ≤ 3x: not met"},
		{"p95 of a ratio", Row{Samples: []float64{10, 10, 10, 10, 200}, TargetX: 5, TargetP: 95}, 20, "p95 ≤ 5x: not met"},
		{"absolute", Row{Samples: []float64{900, 950, 1200}, TargetMS: 1000}, 20, "p50 ≤ 1000 ms: met"},
		{"no target", Row{Samples: []float64{1}}, 20, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.row.verdict(tc.b50); got != tc.want {
				t.Fatalf("verdict = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"resume → first command, 100 MiB held":         "resume-first-command-100-mib-held",
		"fork of 10, 1 GiB held, each fork's first...": "fork-of-10-1-gib-held-each-fork-s-first",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCompare saves two reports and compares them: rows only the after
// run has are shown without a before, and each millisecond row gets a
// picture.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	before := &Report{Label: "before", Runtime: "runsc", Baseline: []float64{20, 21, 22},
		Rows: []Row{{Name: "resume → first command, 100 MiB held", Samples: []float64{250, 260, 300}}}}
	after := &Report{Label: "after", Runtime: "runsc", Baseline: []float64{19, 20, 21},
		Rows: []Row{
			{Name: "resume → first command, 100 MiB held", Samples: []float64{50, 55, 70}, TargetX: 3},
			{Name: "memory of the 10 forks (PSS, sum)", Unit: "MiB", Samples: []float64{1000}},
		}}
	bp, ap := filepath.Join(dir, "b.json"), filepath.Join(dir, "a.json")
	if err := saveReport(bp, before); err != nil {
		t.Fatal(err)
	}
	if err := saveReport(ap, after); err != nil {
		t.Fatal(err)
	}
	if err := Compare(bp, ap, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"runsc-resume-first-command-100-mib-held.svg", "runsc-resume-first-command-100-mib-held.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("picture %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "runsc-memory-of-the-10-forks-pss-sum.svg")); err == nil {
		t.Error("a MiB row got a latency picture")
	}
	if err := os.WriteFile(bp, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Compare(bp, ap, ""); err == nil || !strings.Contains(err.Error(), "b.json") {
		t.Fatalf("a broken report: err = %v, want one naming the file", err)
	}
}
