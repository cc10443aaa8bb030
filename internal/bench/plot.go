package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// series is one line of a picture.
type series struct {
	name string
	xys  plotter.XYs
}

// cdf is the empirical distribution of xs: for each sorted value, the
// share of values at or below it.
func cdf(xs []float64) plotter.XYs {
	s := slices.Clone(xs)
	slices.Sort(s)
	out := make(plotter.XYs, len(s))
	for i, x := range s {
		out[i] = plotter.XY{X: x, Y: float64(i+1) / float64(len(s))}
	}
	return out
}

// plotTTI draws the distribution of time to interactive of each run, next
// to the baseline's, on a log scale: tti-<runtime>.svg and .png.
func plotTTI(c *Config, base []float64, runs []*ttiRun) error {
	lines := []series{{"baseline: runc run /bin/true", cdf(base)}}
	for _, r := range runs {
		if xs := r.ok(); len(xs) > 0 {
			lines = append(lines, series{r.Name, cdf(xs)})
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Time to interactive, %s (ComputeSDK's method)", c.Runtime)
	p.X.Label.Text = "create → first command (ms, log scale)"
	p.Y.Label.Text = "share of sandboxes"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	return savePlot(p, lines, c.PlotDir, "tti-"+c.Runtime)
}

// plotDensity draws what live sandboxes cost as their number grows: the
// create time and the host memory each, density-<runtime>.svg and .png.
func plotDensity(c *Config, rows []densityRow) error {
	var create, mem plotter.XYs
	for _, r := range rows {
		create = append(create, plotter.XY{X: float64(r.Live), Y: r.CreateP50})
		mem = append(mem, plotter.XY{X: float64(r.Live), Y: r.DropMiB})
	}
	for _, pic := range []struct {
		file, title, y string
		xys            plotter.XYs
	}{
		{"density-create-" + c.Runtime, "Create time as live sandboxes add up, " + c.Runtime, "create p50 (ms)", create},
		{"density-memory-" + c.Runtime, "Host memory per idle sandbox, " + c.Runtime, "MemAvailable drop per sandbox (MiB)", mem},
	} {
		p := plot.New()
		p.Title.Text = pic.title
		p.X.Label.Text = "live idle sandboxes"
		p.Y.Label.Text = pic.y
		p.Y.Min = 0
		p.Legend.Top, p.Legend.Left = true, true
		if err := savePlot(p, []series{{pic.y, pic.xys}}, c.PlotDir, pic.file); err != nil {
			return err
		}
	}
	return nil
}

// savePlot adds the lines to p and writes it as SVG and PNG into dir.
func savePlot(p *plot.Plot, lines []series, dir, name string) error {
	p.Add(plotter.NewGrid())
	for i, s := range lines {
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return fmt.Errorf("bench: plotting %s: %w", s.name, err)
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(1.5)
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, ext := range []string{"svg", "png"} {
		path := filepath.Join(dir, name+"."+ext)
		if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
			return fmt.Errorf("bench: writing %s: %w", path, err)
		}
		fmt.Println("wrote", path)
	}
	return nil
}
