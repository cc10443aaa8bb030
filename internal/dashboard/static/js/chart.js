// Time-series charts on uPlot: one canvas per chart, its width following
// its element.

import uPlot from '../vendor/uplot/uPlot.esm.js';

const COLORS = ['#2a7ab0', '#c05621', '#2f855a', '#805ad5'];
const HEIGHT = 220;

// lineChart draws series over time in el. data is [times (unix seconds),
// values…]; series names each value column; fmt formats values. The y
// axis starts at 0 and reaches at least minTop, so a flat line at zero
// does not fill the chart.
export function lineChart(el, title, series, data, fmt = (v) => v, minTop = 1) {
  const opts = {
    title,
    width: Math.max(el.clientWidth, 300),
    height: HEIGHT,
    series: [{}, ...series.map((s, i) => ({label: s, stroke: COLORS[i % COLORS.length], width: 2,
      fill: i === 0 ? `${COLORS[0]}22` : undefined, value: (u, v) => (v == null ? '—' : fmt(v))}))],
    axes: [{}, {values: (u, vals) => vals.map(fmt), size: 90}],
    scales: {
      y: {range: (u, min, max) => [0, Math.max(max, minTop) * 1.1]},
    },
  };
  const plot = new uPlot(opts, data, el);
  // A few samples close together would span years on uPlot's own range.
  const widen = (d) => {
    const t = d[0];
    if (t.length && t[t.length - 1] - t[0] < 120) plot.setScale('x', {min: t[0] - 60, max: t[t.length - 1] + 60});
  };
  widen(data);
  const ro = new ResizeObserver(() => plot.setSize({width: Math.max(el.clientWidth, 300), height: HEIGHT}));
  ro.observe(el);
  return {
    update: (d) => { plot.setData(d); widen(d); },
    destroy: () => { ro.disconnect(); plot.destroy(); },
  };
}
