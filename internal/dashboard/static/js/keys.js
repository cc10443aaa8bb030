// The team's API keys: list, create (the secret is shown once) and delete.

import {api} from './api.js';
import {errorBox, h, replace, section, table, when} from './dom.js';

function masked(k) {
  const m = k.mask || {};
  return `${m.prefix || ''}${m.maskedValuePrefix || ''}…${m.maskedValueSuffix || ''}`;
}

function deleteButton(k, reload, status) {
  const b = h('button', {class: 'danger small', onclick: async () => {
    if (b.dataset.armed !== 'yes') {
      b.dataset.armed = 'yes';
      b.textContent = 'Click again to delete';
      return;
    }
    try { await api('DELETE', `/api-keys/${k.id}`); reload(); } catch (e) { replace(status, errorBox(e)); }
  }}, 'Delete');
  return b;
}

async function list(out, status) {
  const reload = () => list(out, status);
  try {
    const keys = await api('GET', '/api-keys');
    replace(out, table(['Name', 'Key', 'Scopes', 'Created', 'Last used', 'Expires', ''], keys.map((k) => [
      k.name, h('span', {class: 'mono'}, masked(k)), (k.scopes || []).join(', ') || 'all',
      when(k.createdAt), when(k.lastUsed), when(k.expiresAt), deleteButton(k, reload, status),
    ]), 'No keys.'));
  } catch (e) {
    replace(out, errorBox(e));
  }
}

export async function render(main) {
  const out = h('div', {id: 'key-list'});
  const status = h('div', {id: 'key-status'});
  const name = h('input', {id: 'key-name', required: true, placeholder: 'name, e.g. ci'});
  const form = h('form', {class: 'toolbar', id: 'key-form', onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const k = await api('POST', '/api-keys', {name: name.value.trim()});
      name.value = '';
      replace(status, h('div', {class: 'secret', role: 'status'},
        h('p', {}, `Key “${k.name}” created. Copy it now: it is not shown again.`),
        h('input', {class: 'mono', readonly: true, value: k.key, id: 'new-key', onfocus: (e) => e.target.select()})));
      list(out, status);
    } catch (e) {
      replace(status, errorBox(e));
    }
  }}, h('label', {}, 'New key ', name), h('button', {type: 'submit', class: 'primary'}, 'Create'));
  replace(main, h('div', {class: 'page-head'}, h('h1', {}, 'API keys')),
    section('Create a key', form, status), section('Keys of this team', out));
  await list(out, status);
}
