package warren

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Result is one rich output of a run: every representation the kernel
// gave of one object (a figure has PNG and Chart, a DataFrame HTML, Text
// and Data), as E2B's Result. Images and PDF are base64, as they stream.
type Result struct {
	Text       string `json:"text,omitempty"` // text/plain, one pair of surrounding quotes stripped
	HTML       string `json:"html,omitempty"`
	Markdown   string `json:"markdown,omitempty"`
	SVG        string `json:"svg,omitempty"`
	PNG        string `json:"png,omitempty"`  // base64
	JPEG       string `json:"jpeg,omitempty"` // base64
	PDF        string `json:"pdf,omitempty"`  // base64
	LaTeX      string `json:"latex,omitempty"`
	JavaScript string `json:"javascript,omitempty"`
	// JSON is application/json; Data is e2b/data (a DataFrame as
	// {column: [values]}).
	JSON json.RawMessage `json:"json,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	// Chart is the data of a matplotlib figure (e2b/chart), nil for other
	// objects.
	Chart *Chart `json:"chart,omitempty"`
	// IsMainResult marks the value of the cell's last expression, as
	// opposed to what display() showed.
	IsMainResult bool `json:"is_main_result"`
	// Extra holds every other MIME type, by its key.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// resultKeys are the stream keys Result has fields for; the rest go to
// Extra, as E2B's JS SDK collects them.
var resultKeys = []string{"type", "text", "html", "markdown", "svg", "png", "jpeg", "pdf", "latex",
	"javascript", "json", "data", "chart", "is_main_result", "extra"}

// UnmarshalJSON reads a result line of the /execute stream.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k, v := range all {
		if slices.Contains(resultKeys, k) || string(v) == "null" {
			continue
		}
		if r.Extra == nil {
			r.Extra = map[string]json.RawMessage{}
		}
		r.Extra[k] = v
	}
	r.JSON, r.Data = nonNull(r.JSON), nonNull(r.Data)
	return nil
}

func nonNull(m json.RawMessage) json.RawMessage {
	if string(m) == "null" {
		return nil
	}
	return m
}

// Formats lists the representations the result has ("text", "png",
// "chart", ...), like E2B's result.formats().
func (r *Result) Formats() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"text", r.Text != ""}, {"html", r.HTML != ""}, {"markdown", r.Markdown != ""}, {"svg", r.SVG != ""},
		{"png", r.PNG != ""}, {"jpeg", r.JPEG != ""}, {"pdf", r.PDF != ""}, {"latex", r.LaTeX != ""},
		{"json", r.JSON != nil}, {"javascript", r.JavaScript != ""}, {"data", r.Data != nil}, {"chart", r.Chart != nil},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	for k := range r.Extra {
		out = append(out, k)
	}
	return out
}

// Chart is a matplotlib figure as data, so that a program can read the
// plotted values instead of the picture. Type is "line", "scatter",
// "bar", "pie", "box_and_whisker", "superchart" (a figure of several
// axes: see Charts) or "unknown".
type Chart struct {
	Type  string `json:"type"`
	Title string `json:"title"`

	// Axes of 2-D charts (line, scatter, bar, box_and_whisker).
	XLabel string `json:"x_label,omitempty"`
	YLabel string `json:"y_label,omitempty"`
	XUnit  string `json:"x_unit,omitempty"`
	YUnit  string `json:"y_unit,omitempty"`
	// Ticks and scales of point charts (line, scatter). A tick is a number
	// or, on datetime and categorical axes, a string; a scale is "linear",
	// "datetime", "categorical", "log", ...
	XTicks      []any    `json:"x_ticks,omitempty"`
	XTickLabels []string `json:"x_tick_labels,omitempty"`
	XScale      string   `json:"x_scale,omitempty"`
	YTicks      []any    `json:"y_ticks,omitempty"`
	YTickLabels []string `json:"y_tick_labels,omitempty"`
	YScale      string   `json:"y_scale,omitempty"`

	// Elements are the plotted series or items; Charts are a superchart's
	// charts, one per axes.
	Elements []ChartElement `json:"-"`
	Charts   []Chart        `json:"-"`
	// Raw is the chart as it streamed, for what the fields leave out.
	Raw json.RawMessage `json:"-"`
}

// ChartElement is one element of a Chart; which fields are set depends on
// the chart's type.
type ChartElement struct {
	Label string `json:"label"`
	// Points of a line or scatter series: [x, y], each a number or, on a
	// datetime or categorical axis, a string.
	Points [][2]any `json:"points,omitempty"`
	// Value and Group of a bar.
	Value float64 `json:"value,omitempty"`
	Group string  `json:"group,omitempty"`
	// Angle (degrees) and Radius of a pie wedge.
	Angle  float64 `json:"angle,omitempty"`
	Radius float64 `json:"radius,omitempty"`
	// The statistics of a box.
	Min           float64   `json:"min,omitempty"`
	FirstQuartile float64   `json:"first_quartile,omitempty"`
	Median        float64   `json:"median,omitempty"`
	ThirdQuartile float64   `json:"third_quartile,omitempty"`
	Max           float64   `json:"max,omitempty"`
	Outliers      []float64 `json:"outliers,omitempty"`
}

// UnmarshalJSON reads an e2b/chart object; a superchart's elements are
// charts themselves.
func (c *Chart) UnmarshalJSON(b []byte) error {
	type plain Chart
	var w struct {
		plain
		Elements json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	*c = Chart(w.plain)
	c.Raw = append(json.RawMessage(nil), b...)
	if len(w.Elements) == 0 || string(w.Elements) == "null" {
		return nil
	}
	into := any(&c.Elements)
	if c.Type == "superchart" {
		into = &c.Charts
	}
	if err := json.Unmarshal(w.Elements, into); err != nil {
		return fmt.Errorf("%s chart elements: %w", c.Type, err)
	}
	return nil
}
