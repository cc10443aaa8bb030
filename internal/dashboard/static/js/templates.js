// The templates page: every template the team can use, with its build state.

import {api} from './api.js';
import {bytes, h, replace, table, when} from './dom.js';

// resources reads 0 as what it means: the server's default.
export function resources(t) {
  const cpu = t.cpuCount ? `${t.cpuCount} vCPU` : 'default vCPUs';
  const mem = t.memoryMB ? `${t.memoryMB} MiB` : 'default memory';
  return `${cpu} · ${mem}`;
}

export async function render(main) {
  const list = await api('GET', '/templates');
  const rows = list.map((t) => [
    h('a', {href: `#/templates/${encodeURIComponent(t.templateID)}`, class: 'mono', 'data-name': (t.names || [])[0]}, t.templateID),
    (t.names && t.names.length ? t.names : t.aliases || []).join(', ') || '—',
    h('span', {class: `state ${t.buildStatus}`}, t.buildStatus),
    resources(t),
    t.sizeBytes ? bytes(t.sizeBytes) : '—',
    when(t.updatedAt),
    t.spawnCount ?? '—',
  ]);
  replace(main, h('div', {class: 'page-head'}, h('h1', {}, 'Templates')),
    table(['Template', 'Names', 'Build', 'Defaults', 'Size', 'Updated', 'Sandboxes started'], rows, 'No templates.'));
}
