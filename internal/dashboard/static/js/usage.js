// The usage page: the team's running sandboxes, vCPUs and memory over time
// and the CPU time they used (GET /usage?start=&end=&step=), as charts over
// a chosen range.

import {api, missingNote} from './api.js';
import {errorBox, h, replace} from './dom.js';
import {lineChart} from './chart.js';

const RANGES = [['1h', 3600, 60], ['6h', 21600, 300], ['24h', 86400, 900], ['7d', 604800, 3600]];
const REFRESH_MS = 30000; // samples come once a minute
let chosen = '24h';

// points reads the answer's points ({step, points: [{timestampUnix,
// runningSandboxes, vcpus, memoryMB, cpuUsedSeconds}]}), oldest first.
export function points(body) {
  const step = (body && body.step) || 60;
  return ((body && body.points) || []).map((p) => ({
    t: p.timestampUnix, sandboxes: p.runningSandboxes, vcpus: p.vcpus, memoryMB: p.memoryMB,
    cores: (p.cpuUsedSeconds || 0) / step,
  }));
}

// draw fetches the chosen range and draws it into out, unless current()
// has turned false meanwhile (a newer draw, or the page left); it returns
// the charts' destroy, or null when it drew nothing.
async function draw(out, current) {
  const [, span, step] = RANGES.find(([n]) => n === chosen);
  const end = Math.floor(Date.now() / 1000);
  let body;
  try {
    body = await api('GET', '/usage', undefined, {start: end - span, end, step});
  } catch (e) {
    if (!current()) return null;
    replace(out, e.missing ? h('p', {class: 'muted', id: 'usage-missing'}, missingNote('Usage over time')) : errorBox(e));
    return () => {};
  }
  if (!current()) return null;
  const ps = points(body);
  const count = (v) => (Number.isInteger(+v) ? String(v) : (+v).toFixed(1));
  const t = ps.map((p) => p.t);
  const els = ['usage-sandboxes', 'usage-vcpus', 'usage-memory', 'usage-cpu'].map((id) => h('div', {class: 'chart', id}));
  out.dataset.peak = Math.max(0, ...ps.map((p) => p.sandboxes));
  replace(out, ps.length ? null : h('p', {class: 'muted'}, 'No usage recorded in this range.'), h('div', {class: 'charts'}, els));
  const charts = [
    lineChart(els[0], 'Running sandboxes', ['sandboxes'], [t, ps.map((p) => p.sandboxes)], count),
    lineChart(els[1], 'vCPUs', ['vCPUs'], [t, ps.map((p) => p.vcpus)], count),
    lineChart(els[2], 'Memory reserved', ['MiB'], [t, ps.map((p) => p.memoryMB)], (v) => `${count(v)} MiB`),
    lineChart(els[3], 'CPU used (average cores)', ['cores'], [t, ps.map((p) => p.cores)], (v) => (+v).toFixed(2), 0.1),
  ];
  return () => charts.forEach((c) => c.destroy());
}

export async function render(main) {
  const out = h('div', {id: 'usage'});
  let destroy = () => {};
  let seq = 0;
  const redraw = async () => {
    const mine = ++seq;
    const d = await draw(out, () => mine === seq);
    if (d) { destroy(); destroy = d; }
  };
  const picker = h('div', {class: 'toolbar'}, 'Range ', RANGES.map(([n]) => h('button', {
    class: n === chosen ? 'primary small' : 'small', 'data-range': n, onclick: (ev) => {
      chosen = n;
      for (const b of picker.querySelectorAll('button')) b.className = 'small';
      ev.target.className = 'primary small';
      redraw();
    }}, n)));
  replace(main, h('div', {class: 'page-head'}, h('h1', {}, 'Usage')),
    h('p', {class: 'muted'}, 'What this team had running, sampled each minute (refreshed every 30 s).'), picker, out);
  await redraw();
  const timer = setInterval(redraw, REFRESH_MS);
  return () => { seq++; clearInterval(timer); destroy(); };
}
