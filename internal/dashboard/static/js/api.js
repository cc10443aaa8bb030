// The REST API, called with the key the user signed in with. The key lives
// in sessionStorage only: it is gone when the tab closes.

const KEY = 'warren.apiKey';

export function apiKey() { return sessionStorage.getItem(KEY); }
export function setAPIKey(k) { sessionStorage.setItem(KEY, k); }
export function clearAPIKey() { sessionStorage.removeItem(KEY); }

// APIError carries the API's {code, message} and the HTTP status.
export class APIError extends Error {
  constructor(status, message, path) {
    super(message);
    this.status = status;
    this.path = path;
  }
  // missing: the server has no such endpoint (an older or smaller warren).
  get missing() {
    return this.status === 501 || (this.status === 404 && /^no route/.test(this.message));
  }
  get unauthorized() { return this.status === 401; }
}

// onUnauthorized is called when the key is refused (set by main.js).
let unauthorized = () => {};
export function onUnauthorized(fn) { unauthorized = fn; }

// api calls the API: api('GET', '/v2/sandboxes', undefined, {state: 'running'}).
// It resolves to the decoded JSON (null for an empty answer), with the
// response headers as a hidden property, and rejects with an APIError.
export async function api(method, path, body, query) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, v);
  }
  const headers = {'X-API-KEY': apiKey() || ''};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let resp;
  try {
    resp = await fetch(url, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  } catch (e) {
    throw new APIError(0, `cannot reach warren: ${e.message}`, path);
  }
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!resp.ok) {
    const msg = data && data.message ? data.message : `${method} ${path}: HTTP ${resp.status}`;
    const err = new APIError(resp.status, msg, path);
    if (err.unauthorized) unauthorized(err);
    throw err;
  }
  return data;
}

// missingNote is what a panel shows when the server lacks its endpoint.
export function missingNote(what) {
  return `${what} is not available on this server.`;
}
