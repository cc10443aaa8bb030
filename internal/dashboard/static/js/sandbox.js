// A sandbox's page: what it is, pause/resume/kill, CPU and memory charts,
// its logs and lifecycle events (sandbox_panels.js), a desktop's screen
// (screen.js) and a terminal.

import {api} from './api.js';
import {bytes, errorBox, h, replace, section, when} from './dom.js';
import {chartsPanel, eventsPanel, logsPanel} from './sandbox_panels.js';
import {screenPanel} from './screen.js';
import {openTerminal} from './terminal.js';

const REFRESH_MS = 5000;

// volumeMounts lists the volumes mounted in the sandbox, each with where.
function volumeMounts(sb) {
  const mounts = sb.volumeMounts || [];
  if (!mounts.length) return '—';
  return h('ul', {class: 'plain', id: 'sandbox-volumes'}, mounts.map((m) =>
    h('li', {}, h('a', {href: '#/volumes', 'data-volume-name': m.name}, m.name), ' at ', h('code', {}, m.path))));
}

function info(sb) {
  const meta = Object.entries(sb.metadata || {}).map(([k, v]) => h('span', {class: 'tag'}, `${k}=${v}`));
  const rows = [
    ['Template', sb.alias && sb.alias !== sb.templateID ? `${sb.alias} (${sb.templateID})` : sb.templateID],
    ['Resources', `${sb.cpuCount} vCPU · ${sb.memoryMB} MiB memory · ${bytes(sb.diskSizeMB * 1048576)} disk`],
    ['Started', when(sb.startedAt)],
    ['Ends', sb.state === 'paused' ? 'paused: no timeout runs' : when(sb.endAt)],
    ['envd', sb.envdVersion],
    ['Metadata', meta.length ? meta : '—'],
    ['Volumes', volumeMounts(sb)],
  ];
  return h('dl', {class: 'facts'}, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

// actions are the buttons that change the sandbox; kill asks to be
// clicked twice.
function actions(sb, rerender, status) {
  const act = (label, fn) => h('button', {id: `action-${label.toLowerCase()}`, onclick: async (ev) => {
    ev.target.disabled = true;
    status.textContent = `${label}…`;
    try { await fn(); status.textContent = ''; rerender(); } catch (e) { status.textContent = e.message; ev.target.disabled = false; }
  }}, label);
  const kill = h('button', {id: 'action-kill', class: 'danger', onclick: async () => {
    if (kill.dataset.armed !== 'yes') {
      kill.dataset.armed = 'yes';
      kill.textContent = 'Click again to kill';
      setTimeout(() => { kill.dataset.armed = ''; kill.textContent = 'Kill'; }, 5000);
      return;
    }
    kill.disabled = true;
    try {
      await api('DELETE', `/sandboxes/${sb.sandboxID}`);
      location.hash = '#/sandboxes';
    } catch (e) { status.textContent = e.message; kill.disabled = false; }
  }}, 'Kill');
  return h('div', {class: 'actions'},
    sb.state === 'running' ? act('Pause', () => api('POST', `/sandboxes/${sb.sandboxID}/pause`)) : null,
    sb.state === 'paused' ? act('Resume', () => api('POST', `/sandboxes/${sb.sandboxID}/resume`, {})) : null,
    kill, status);
}

// terminalPanel holds the terminal; once its shell has ended, the button
// opens a new one.
function terminalPanel(sb, closers) {
  const box = h('div', {class: 'terminal', id: 'terminal', hidden: true});
  const status = h('span', {class: 'muted small', id: 'terminal-status'});
  let closeTerm = null;
  const onStatus = (s) => {
    status.textContent = s;
    if (!s.startsWith('shell running')) { open.disabled = false; open.textContent = 'Open a new terminal'; }
  };
  const open = h('button', {id: 'open-terminal', class: 'primary', onclick: () => {
    if (closeTerm) closeTerm();
    open.disabled = true;
    box.hidden = false;
    let closed = false;
    const close = openTerminal(box, sb.sandboxID, sb.envdAccessToken, onStatus);
    closeTerm = () => { if (!closed) { closed = true; close(); } };
    closers.push(closeTerm);
  }}, 'Open terminal');
  if (sb.state !== 'running') {
    return section('Terminal', h('p', {class: 'muted'}, 'Resume the sandbox to open a terminal.'));
  }
  status.textContent = 'a login shell in the sandbox, as its default user';
  return section('Terminal', h('div', {class: 'toolbar'}, open, status), box);
}

export async function render(main, id) {
  const closers = [];
  const close = () => { while (closers.length) closers.pop()(); };
  let left = false; // the user went to another page: draw nothing more
  const draw = async () => {
    close();
    let sb;
    try {
      sb = await api('GET', `/sandboxes/${id}`);
      if (left) return;
    } catch (e) {
      if (left) return;
      replace(main, h('p', {}, h('a', {href: '#/sandboxes'}, '← Sandboxes')), errorBox(e));
      return;
    }
    const status = h('span', {class: 'muted small', id: 'action-status'});
    const charts = chartsPanel(id);
    const logs = logsPanel(id);
    const events = eventsPanel(id);
    const screen = screenPanel(sb);
    closers.push(screen.close);
    replace(main,
      h('p', {}, h('a', {href: '#/sandboxes'}, '← Sandboxes')),
      h('div', {class: 'page-head'}, h('h1', {class: 'mono'}, id), h('span', {class: `state ${sb.state}`, id: 'sandbox-state'}, sb.state)),
      actions(sb, draw, status), info(sb), charts.el, screen.el, terminalPanel(sb, closers), logs.el, events.el);
    // A state changed elsewhere (a timeout, another client) redraws the
    // page; a sandbox gone says so.
    const recheck = () => api('GET', `/sandboxes/${id}`).then(
      (now) => { if (now.state !== sb.state) draw(); },
      (e) => { status.textContent = e.status === 404 ? 'This sandbox is gone.' : e.message; });
    const refresh = () => Promise.all([charts.refresh(), logs.refresh(), events.refresh()]);
    await refresh();
    const timer = setInterval(() => { recheck(); refresh(); }, REFRESH_MS);
    closers.push(() => clearInterval(timer), charts.destroy);
  };
  await draw();
  return () => { left = true; close(); };
}
