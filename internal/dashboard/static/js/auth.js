// Sign in and out. A key arrives from the form or from the URL
// (/dashboard/#key=KEY, removed from the address bar at once) and is
// checked with GET /v2/sandboxes before it is kept.

import {APIError, apiKey, setAPIKey, clearAPIKey} from './api.js';
import {h, replace} from './dom.js';

// keyFromURL takes #key=KEY out of the URL, if present.
export function keyFromURL() {
  const m = location.hash.match(/^#key=([^&]+)/);
  if (!m) return null;
  history.replaceState(null, '', location.pathname + '#/sandboxes');
  return decodeURIComponent(m[1]);
}

// signIn checks key against the API and keeps it for this tab.
export async function signIn(key) {
  let resp;
  try {
    resp = await fetch('/v2/sandboxes?limit=1', {headers: {'X-API-KEY': key}});
  } catch (e) {
    throw new APIError(0, `cannot reach warren: ${e.message}`, '/v2/sandboxes');
  }
  if (!resp.ok) {
    const body = await resp.json().catch(() => ({}));
    throw new APIError(resp.status, body.message || `HTTP ${resp.status}`, '/v2/sandboxes');
  }
  setAPIKey(key);
}

export function signedIn() { return !!apiKey(); }

export function signOut() {
  clearAPIKey();
}

// loginPage renders the sign-in form into main; done runs after success.
export function loginPage(main, done, message) {
  // No name: a form the script did not handle sends no key anywhere.
  const input = h('input', {type: 'password', id: 'apikey', autocomplete: 'off',
    placeholder: 'e2b_…', required: true, autofocus: true});
  const status = h('p', {class: 'error', role: 'alert', hidden: !message}, message || '');
  const form = h('form', {class: 'login', id: 'login',
    onsubmit: async (ev) => {
      ev.preventDefault();
      status.hidden = true;
      try {
        await signIn(input.value.trim());
        done();
      } catch (e) {
        status.textContent = e.unauthorized ? 'This key was refused: check it and try again.' : e.message;
        status.hidden = false;
      }
    }},
  h('h1', {}, 'Sign in to warren'),
  h('label', {for: 'apikey'}, 'API key'), input,
  h('button', {type: 'submit', class: 'primary'}, 'Sign in'), status,
  h('p', {class: 'muted'}, 'The key stays in this browser tab only (session storage) and is sent to this server alone.'));
  replace(main, form);
}
