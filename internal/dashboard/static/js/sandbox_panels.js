// The refreshing panels of a sandbox's page: CPU and memory charts
// (GET /sandboxes/{id}/metrics), logs (GET /v2/sandboxes/{id}/logs) and
// lifecycle events (GET /events/sandboxes/{id}).

import {api, missingNote} from './api.js';
import {bytes, errorBox, h, replace, section, table, when} from './dom.js';
import {lineChart} from './chart.js';

const WINDOW_S = 3600;

export function chartsPanel(id) {
  const cpuEl = h('div', {class: 'chart', id: 'chart-cpu'});
  const memEl = h('div', {class: 'chart', id: 'chart-mem'});
  const note = h('p', {class: 'muted small'});
  const el = section('CPU and memory (last hour)', note, h('div', {class: 'charts'}, cpuEl, memEl));
  let cpu = null;
  let mem = null;
  const refresh = async () => {
    try {
      const now = Math.floor(Date.now() / 1000);
      const samples = await api('GET', `/sandboxes/${id}/metrics`, undefined, {start: now - WINDOW_S, end: now});
      const t = samples.map((s) => s.timestampUnix);
      const cpuData = [t, samples.map((s) => s.cpuUsedPct)];
      const memData = [t, samples.map((s) => s.memUsed)];
      const limit = samples.length ? samples[samples.length - 1].memTotal : 0;
      note.textContent = samples.length ? `${samples.length} sample${samples.length === 1 ? '' : 's'}` : 'No samples yet: the first arrives within seconds of the start.';
      if (!cpu) {
        cpu = lineChart(cpuEl, 'CPU', ['used %'], cpuData, (v) => `${(+v).toFixed(1)}%`);
        // The limit is a title, not a line: a few MiB used under a 512 MiB
        // line would be flat at zero.
        mem = lineChart(memEl, limit ? `Memory (limit ${bytes(limit)})` : 'Memory', ['used'], memData, bytes, 1 << 20);
      } else {
        cpu.update(cpuData);
        mem.update(memData);
      }
      el.dataset.samples = samples.length;
    } catch (e) {
      replace(note, errorBox(e));
    }
  };
  return {el, refresh, destroy: () => { cpu && cpu.destroy(); mem && mem.destroy(); }};
}

export function logsPanel(id) {
  const out = h('div', {class: 'logs', id: 'sandbox-logs'});
  const el = section('Logs', out);
  const refresh = async () => {
    try {
      const {logs} = await api('GET', `/v2/sandboxes/${id}/logs`, undefined, {direction: 'backward', limit: 200});
      const lines = logs.slice().reverse().map((l) => h('div', {class: `log ${l.level}`},
        h('span', {class: 'muted'}, when(l.timestamp)), ' ', h('span', {class: 'level'}, l.level), ' ', l.message));
      replace(out, lines.length ? lines : h('p', {class: 'muted'}, 'No log lines yet.'));
    } catch (e) {
      replace(out, errorBox(e));
    }
  };
  return {el, refresh};
}

// eventsPanel shows the sandbox's lifecycle events, newest first; on a
// server without the events API it says so.
export function eventsPanel(id) {
  const out = h('div', {id: 'sandbox-events'});
  const el = section('Lifecycle events', out);
  let missing = false;
  const refresh = async () => {
    if (missing) return;
    try {
      const events = await api('GET', `/events/sandboxes/${id}`, undefined, {limit: 50, orderAsc: false});
      replace(out, table(['Time', 'Event', 'Details'], events.map((e) => [
        when(e.timestamp), (e.type || '').replace(/^sandbox\.lifecycle\./, ''),
        e.eventData ? h('code', {}, JSON.stringify(e.eventData)) : '—',
      ]), 'No events recorded.'));
    } catch (e) {
      missing = e.missing;
      replace(out, e.missing ? h('p', {class: 'muted'}, missingNote('The lifecycle events API')) : errorBox(e));
    }
  };
  return {el, refresh};
}
