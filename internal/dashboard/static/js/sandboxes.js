// The sandboxes page: running and paused sandboxes, refreshed every few
// seconds, filtered by metadata (key=value pairs) and state.

import {api} from './api.js';
import {errorBox, h, replace, table, when} from './dom.js';

const REFRESH_MS = 3000;
// The filter outlives a visit to a sandbox's page.
const filter = {metadata: '', state: 'running,paused'};

// metadataQuery turns "a=1, b=2" into the API's metadata parameter
// (URL-encoded pairs joined by &).
export function metadataQuery(text) {
  return text.split(/[,\s]+/).filter((p) => p.includes('='))
    .map((p) => { const i = p.indexOf('='); return `${encodeURIComponent(p.slice(0, i))}=${encodeURIComponent(p.slice(i + 1))}`; })
    .join('&');
}

function row(sb) {
  const meta = Object.entries(sb.metadata || {}).map(([k, v]) => h('span', {class: 'tag'}, `${k}=${v}`));
  return [
    h('a', {href: `#/sandboxes/${sb.sandboxID}`, class: 'mono', 'data-sandbox': sb.sandboxID}, sb.sandboxID),
    sb.alias || sb.templateID,
    h('span', {class: `state ${sb.state}`}, sb.state),
    `${sb.cpuCount} vCPU · ${sb.memoryMB} MiB`,
    when(sb.startedAt),
    when(sb.endAt),
    meta.length ? meta : h('span', {class: 'muted'}, '—'),
  ];
}

// queueText describes the start queue (GET /admission): what waits now
// and how waits ended since the server started.
export function queueText(q) {
  const waitS = (ms) => `${Math.round(ms / 100) / 10} s`;
  const now = q.waiting
    ? `${q.waiting} waiting (${q.waitingForTeam} of this team's; oldest ${waitS(q.oldestWaitMs)})`
    : 'none waiting';
  const avg = q.admitted ? `, ${waitS(q.waitedTotalMs / q.admitted)} on average` : '';
  return `Start queue: ${q.running} starting, ${now}, ${q.slots} at once · ` +
    `since start ${q.admitted} waited their turn${avg}, ${q.timedOut + q.full} refused`;
}

// loadQueue shows the start queue in el; a server without one (a
// cluster's API role) shows nothing.
async function loadQueue(el) {
  try {
    el.textContent = queueText(await api('GET', '/admission'));
  } catch (e) {
    el.textContent = '';
  }
}

// seq numbers the loads, so an answer to an older filter never replaces a
// newer one's.
let seq = 0;

async function load(out, stamp) {
  const mine = ++seq;
  try {
    const list = await api('GET', '/v2/sandboxes', undefined,
      {state: filter.state, metadata: metadataQuery(filter.metadata), limit: 100});
    if (mine !== seq) return;
    replace(out, table(['Sandbox', 'Template', 'State', 'Resources', 'Started', 'Ends', 'Metadata'],
      list.map(row), 'No sandboxes match.'));
    stamp.textContent = `${list.length} shown · updated ${new Date().toLocaleTimeString()}`;
  } catch (e) {
    if (mine === seq) replace(out, errorBox(e));
  }
}

export async function render(main) {
  const out = h('div', {id: 'sandbox-list'}, h('p', {class: 'muted'}, 'Loading…'));
  const stamp = h('span', {class: 'muted small'});
  const meta = h('input', {id: 'filter-metadata', type: 'search', value: filter.metadata,
    placeholder: 'metadata, e.g. user=ann env=dev'});
  const state = h('select', {id: 'filter-state'},
    [['running,paused', 'running and paused'], ['running', 'running'], ['paused', 'paused']]
      .map(([v, t]) => h('option', {value: v, selected: v === filter.state}, t)));
  let typing = null;
  const hint = h('span', {class: 'muted small', id: 'filter-hint'});
  const apply = () => {
    clearTimeout(typing);
    const loose = meta.value.split(/[,\s]+/).filter((p) => p && !p.includes('='));
    hint.textContent = loose.length ? `ignored: ${loose.join(' ')} (write key=value)` : '';
    typing = setTimeout(() => { filter.metadata = meta.value; filter.state = state.value; load(out, stamp); }, 200);
  };
  meta.addEventListener('input', apply);
  state.addEventListener('change', apply);
  const queue = h('p', {class: 'muted small', id: 'start-queue'});
  replace(main,
    h('div', {class: 'page-head'}, h('h1', {}, 'Sandboxes'), stamp),
    h('div', {class: 'toolbar'}, h('label', {}, 'Filter ', meta), h('label', {}, 'State ', state), hint),
    out, queue);
  await Promise.all([load(out, stamp), loadQueue(queue)]);
  const timer = setInterval(() => { load(out, stamp); loadQueue(queue); }, REFRESH_MS);
  return () => clearInterval(timer);
}
