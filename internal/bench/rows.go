package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"gonum.org/v1/plot"
)

// Row is one measurement of a report: its samples (milliseconds unless
// Unit says otherwise) and, where an issue sets one, the target as a
// ratio of a percentile to the baseline's p50.
type Row struct {
	Name    string    `json:"name"`
	Unit    string    `json:"unit,omitempty"`
	Samples []float64 `json:"samples"`
	// TargetX is the most the row's TargetP percentile may be, in
	// multiples of the baseline's p50; 0 when the row has no such
	// target. TargetMS is an absolute bound instead (ms).
	TargetX  float64 `json:"targetX,omitempty"`
	TargetMS float64 `json:"targetMs,omitempty"`
	TargetP  float64 `json:"targetP,omitempty"`
	// Note says what the row's number means when it is not obvious.
	Note string `json:"note,omitempty"`
}

// Report is a run's rows next to the baseline measured in the same run,
// saved with --save so that two runs (before and after a change) can be
// compared and drawn by `warren bench --compare`.
type Report struct {
	Label    string    `json:"label"`
	Runtime  string    `json:"runtime"`
	Baseline []float64 `json:"baseline"`
	Rows     []Row     `json:"rows"`
}

func (r Row) unit() string {
	if r.Unit == "" {
		return "ms"
	}
	return r.Unit
}

// verdict says whether the row meets its target against baseline b50.
func (r Row) verdict(b50 float64) string {
	p := r.TargetP
	if p == 0 {
		p = 50
	}
	v := percentile(r.Samples, p)
	switch {
	case r.TargetX > 0:
		ok := v <= r.TargetX*b50
		return fmt.Sprintf("p%.0f ≤ %gx: %s", p, r.TargetX, yesNo(ok))
	case r.TargetMS > 0:
		return fmt.Sprintf("p%.0f ≤ %g ms: %s", p, r.TargetMS, yesNo(v <= r.TargetMS))
	}
	return ""
}

func yesNo(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// printReport prints the rows as a table with the baseline first.
func printReport(r *Report) {
	b50 := percentile(r.Baseline, 50)
	fmt.Printf("\n| %s (%s) | n | p50 | p95 | p50 / baseline p50 | target |\n", r.Label, r.Runtime)
	fmt.Println("|---|---|---|---|---|---|")
	fmt.Printf("| baseline: runc run /bin/true | %d | %.1f ms | %.1f ms | 1x | |\n", len(r.Baseline), b50, percentile(r.Baseline, 95))
	for _, row := range r.Rows {
		if len(row.Samples) == 0 {
			fmt.Printf("| %s | 0 | | | | no samples |\n", row.Name)
			continue
		}
		ratio := ""
		if row.unit() == "ms" {
			ratio = fmt.Sprintf("%.2fx", percentile(row.Samples, 50)/b50)
		}
		fmt.Printf("| %s | %d | %.0f %s | %.0f %s | %s | %s |\n", row.Name, len(row.Samples),
			percentile(row.Samples, 50), row.unit(), percentile(row.Samples, 95), row.unit(), ratio, row.verdict(b50))
	}
	for _, row := range r.Rows {
		if row.Note != "" {
			fmt.Printf("- %s: %s\n", row.Name, row.Note)
		}
	}
}

// saveReport writes r as JSON to path.
func saveReport(path string, r *Report) error {
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("bench: saving the report: %w", err)
	}
	fmt.Println("saved", path)
	return nil
}

func loadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("bench: reading %s: %w", path, err)
	}
	return &r, nil
}

// Compare prints the rows two saved reports share, before and after, each
// as a ratio to its own run's baseline, and with plotDir set draws one
// CDF per millisecond row: both runs and both baselines.
func Compare(beforePath, afterPath, plotDir string) error {
	before, err := loadReport(beforePath)
	if err != nil {
		return err
	}
	after, err := loadReport(afterPath)
	if err != nil {
		return err
	}
	bb, ab := percentile(before.Baseline, 50), percentile(after.Baseline, 50)
	fmt.Printf("| %s | before p50 | before / its baseline | after p50 | after / its baseline | after p95 | target (after) |\n", after.Runtime)
	fmt.Println("|---|---|---|---|---|---|---|")
	fmt.Printf("| baseline: runc run /bin/true | %.1f ms | 1x | %.1f ms | 1x | %.1f ms | |\n", bb, ab, percentile(after.Baseline, 95))
	for _, a := range after.Rows {
		b := findRow(before, a.Name)
		bp, bx := "–", "–"
		if b != nil && len(b.Samples) > 0 {
			bp = fmt.Sprintf("%.0f %s", percentile(b.Samples, 50), b.unit())
			if b.unit() == "ms" {
				bx = fmt.Sprintf("%.2fx", percentile(b.Samples, 50)/bb)
			}
		}
		ax := "–"
		if a.unit() == "ms" && len(a.Samples) > 0 {
			ax = fmt.Sprintf("%.2fx", percentile(a.Samples, 50)/ab)
		}
		fmt.Printf("| %s | %s | %s | %.0f %s | %s | %.0f %s | %s |\n", a.Name, bp, bx,
			percentile(a.Samples, 50), a.unit(), ax, percentile(a.Samples, 95), a.unit(), a.verdict(ab))
		if plotDir != "" && a.unit() == "ms" && len(a.Samples) > 1 {
			if err := plotCompare(plotDir, after.Runtime, before, after, b, &a); err != nil {
				return err
			}
		}
	}
	return nil
}

func findRow(r *Report, name string) *Row {
	for i := range r.Rows {
		if r.Rows[i].Name == name {
			return &r.Rows[i]
		}
	}
	return nil
}

// plotCompare draws row a (and b, its before, when there is one) next to
// both runs' baselines: <plotDir>/<runtime>-<row slug>.svg and .png.
func plotCompare(dir, runtime string, before, after *Report, b, a *Row) error {
	lines := []series{{"baseline (after's run): runc run /bin/true", cdf(after.Baseline)}}
	if b != nil && len(b.Samples) > 0 {
		lines = append(lines, series{"baseline (before's run)", cdf(before.Baseline)}, series{before.Label, cdf(b.Samples)})
	}
	lines = append(lines, series{after.Label, cdf(a.Samples)})
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, %s", a.Name, runtime)
	p.X.Label.Text = "ms (log scale)"
	p.Y.Label.Text = "share of samples"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	return savePlot(p, lines, dir, runtime+"-"+slug(a.Name))
}

// slug turns a row's name into a file name: lower case letters, digits
// and dashes.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
