// The volumes page: the team's volumes (GET /volumes) with their size
// limit, the bytes in use and the sandboxes that mount them; create one
// by name, delete one (two clicks). The server refuses to delete a
// mounted volume (409): its message is shown beside the list, since the
// fix is to kill the sandboxes it names.

import {api, missingNote} from './api.js';
import {bytes, errorBox, h, replace, section, table, when} from './dom.js';

// usage reads "12.0 MiB of 1.0 GiB"; a server that does not say leaves —.
function usage(v) {
  const limit = v.sizeMB ? bytes(v.sizeMB * 1048576) : null;
  if (v.usedBytes == null) return limit ? `— of ${limit}` : '—';
  return limit ? `${bytes(v.usedBytes)} of ${limit}` : bytes(v.usedBytes);
}

function mounters(v) {
  const ids = v.sandboxes || [];
  if (!ids.length) return h('span', {class: 'muted'}, 'none');
  return ids.map((id, i) => [i ? ', ' : '', h('a', {href: `#/sandboxes/${id}`, class: 'mono', 'data-mounter': id}, id)]);
}

function deleteButton(v, reload, status) {
  const b = h('button', {class: 'danger small', 'data-delete': v.volumeID, onclick: async () => {
    if (b.dataset.armed !== 'yes') {
      b.dataset.armed = 'yes';
      b.textContent = 'Click again to delete';
      return;
    }
    b.disabled = true;
    try {
      await api('DELETE', `/volumes/${encodeURIComponent(v.volumeID)}`);
      replace(status);
      reload();
    } catch (e) {
      const what = e.status === 409 ? `Volume “${v.name}” is in use: ${e.message}` : e.message;
      replace(status, errorBox(new Error(what)));
      b.dataset.armed = '';
      b.textContent = 'Delete';
      b.disabled = false;
    }
  }}, 'Delete');
  return b;
}

async function list(out, status) {
  const reload = () => list(out, status);
  try {
    const vols = await api('GET', '/volumes');
    replace(out, table(['Name', 'Volume', 'Used', 'Mounted by', 'Created', ''], vols.map((v) => [
      h('span', {'data-volume': v.volumeID}, v.name), h('span', {class: 'mono'}, v.volumeID), usage(v),
      mounters(v), when(v.createdAt), deleteButton(v, reload, status),
    ]), 'No volumes.'));
    out.dataset.count = vols.length;
  } catch (e) {
    replace(out, e.missing ? h('p', {class: 'muted', id: 'volumes-missing'}, missingNote('The volumes API')) : errorBox(e));
  }
}

export async function render(main) {
  const out = h('div', {id: 'volume-list'});
  const status = h('div', {id: 'volume-status'});
  const name = h('input', {id: 'volume-name', required: true, pattern: '[a-zA-Z0-9_\\-]{1,63}', placeholder: 'name, e.g. datasets'});
  const form = h('form', {class: 'toolbar', id: 'volume-form', onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      await api('POST', '/volumes', {name: name.value.trim()});
      name.value = '';
      replace(status);
      await list(out, status);
    } catch (e) {
      replace(status, errorBox(e));
    }
  }}, h('label', {}, 'New volume ', name), h('button', {type: 'submit', class: 'primary'}, 'Create'));
  replace(main, h('div', {class: 'page-head'}, h('h1', {}, 'Volumes')),
    section('Create a volume', form, h('p', {class: 'muted small'},
      'A volume outlives sandboxes: mount it at create with volumeMounts, read and write it with its token.')),
    section('Volumes of this team', status, out));
  await list(out, status);
}
