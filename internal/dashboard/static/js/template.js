// A template's page: its settings and builds, and a build's log on demand
// (GET /templates/{id}/builds/{build}/status with logsOffset; a build in
// progress is followed until it ends).

import {api} from './api.js';
import {bytes, errorBox, h, replace, section, table, when} from './dom.js';
import {resources} from './templates.js';

const FOLLOW_MS = 2000;
const PAGE = 100; // the most log lines the API gives at once

function facts(t) {
  const rows = [
    ['Names', (t.names || []).join(', ') || '—'],
    ['Build', t.buildStatus],
    ['Defaults', `${resources(t)} · ${t.diskSizeMB ? `${t.diskSizeMB} MiB disk` : 'default disk'}`],
    ['Size', t.sizeBytes ? bytes(t.sizeBytes) : '—'],
    ['Start command', t.startCmd || '—'],
    ['Created', when(t.createdAt)],
    ['Public', t.public ? 'yes' : 'no'],
  ];
  return h('dl', {class: 'facts'}, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

// showLog fills out with a build's log, read page by page through its
// status (logsOffset), and while the build runs keeps reading; it returns
// a function that stops.
function showLog(out, templateID, build) {
  let stopped = false;
  let timer = null;
  let offset = 0;
  const lines = h('div', {class: 'logs'});
  const head = h('h3', {}, `Build ${build.buildID}`);
  const reason = h('div');
  replace(out, head, reason, lines);
  const url = `/templates/${encodeURIComponent(templateID)}/builds/${build.buildID}/status`;
  const load = async () => {
    try {
      let status;
      for (let page = 0; page < 100 && !stopped; page++) {
        status = await api('GET', url, undefined, {logsOffset: offset, limit: PAGE});
        offset += status.logEntries.length;
        lines.append(...status.logEntries.map(logLine));
        if (status.logEntries.length < PAGE) break;
      }
      head.textContent = `Build ${build.buildID}: ${status.status}`;
      replace(reason, status.reason ? h('div', {class: 'error'}, status.reason.message) : null);
      if (!offset) replace(lines, h('p', {class: 'muted'}, 'No log lines.'));
      if (!stopped && (status.status === 'building' || status.status === 'waiting')) timer = setTimeout(load, FOLLOW_MS);
    } catch (e) {
      replace(reason, errorBox(e));
    }
  };
  load();
  return () => { stopped = true; clearTimeout(timer); };
}

function logLine(l) {
  return h('div', {class: `log ${l.level}`}, h('span', {class: 'muted'}, when(l.timestamp)), ' ',
    l.step ? h('span', {class: 'tag'}, l.step) : null, ' ', l.message);
}

export async function render(main, id) {
  const t = await api('GET', `/templates/${encodeURIComponent(id)}`);
  const logOut = h('div', {id: 'build-log'});
  let stop = () => {};
  const builds = (t.builds || []).map((b) => [
    h('span', {class: 'mono'}, b.buildID),
    h('span', {class: `state ${b.status}`}, b.status),
    (b.tags || []).join(', ') || '—',
    when(b.createdAt), when(b.finishedAt),
    h('button', {class: 'link', 'data-build': b.buildID, onclick: () => { stop(); stop = showLog(logOut, t.templateID, b); }}, 'Log'),
  ]);
  replace(main,
    h('p', {}, h('a', {href: '#/templates'}, '← Templates')),
    h('div', {class: 'page-head'}, h('h1', {class: 'mono'}, t.templateID)),
    facts(t),
    section('Builds', table(['Build', 'State', 'Tags', 'Started', 'Finished', ''], builds, 'No builds.'), logOut));
  return () => stop();
}

