// A small client for envd's process service over the Connect protocol with
// the JSON codec, through warren's proxy: same origin, routed by the
// E2b-Sandbox-Id and E2b-Sandbox-Port headers, authorised by the sandbox's
// envd access token. Server-streaming calls (Start, Connect) send and read
// Connect envelopes (1 flag byte, 4-byte big-endian length, JSON); unary
// calls (SendInput, Update, SendSignal) are plain JSON. Files and the
// environment come from envd's plain HTTP endpoints (GET /files, GET /envs).

const ENVD_PORT = '49983';
const END_STREAM = 0x02;

export class EnvdError extends Error {
  constructor(code, message) { super(`${code}: ${message}`); this.code = code; }
}

// encodeBytes and decodeBytes convert proto bytes (base64 in JSON).
export function encodeBytes(text) {
  const raw = new TextEncoder().encode(text);
  let s = '';
  for (const b of raw) s += String.fromCharCode(b);
  return btoa(s);
}
export function decodeBytes(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function envelope(msg) {
  const json = new TextEncoder().encode(JSON.stringify(msg));
  const out = new Uint8Array(5 + json.length);
  new DataView(out.buffer).setUint32(1, json.length);
  out.set(json, 5);
  return out;
}

// Envd talks to one sandbox's envd. With user set, processes run and
// files are read as that user (the SDKs' Basic Authorization and
// ?username=); without it, as the sandbox's default user.
export class Envd {
  constructor(sandboxID, accessToken, user = '') {
    this.sandboxID = sandboxID;
    this.token = accessToken;
    this.user = user;
  }

  headers(contentType) {
    const hd = {'E2b-Sandbox-Id': this.sandboxID, 'E2b-Sandbox-Port': ENVD_PORT};
    if (contentType) Object.assign(hd, {'Content-Type': contentType, 'Connect-Protocol-Version': '1'});
    if (this.token) hd['X-Access-Token'] = this.token;
    if (this.user) hd.Authorization = `Basic ${btoa(this.user + ':')}`;
    return hd;
  }

  // get fetches one of envd's HTTP endpoints, rejecting with its error.
  async get(path, query = {}) {
    const url = new URL(path, location.origin);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const resp = await fetch(url, {headers: this.headers(), cache: 'no-store'});
    if (!resp.ok) {
      const body = await resp.json().catch(() => ({}));
      throw new EnvdError(body.code || resp.status, body.message || resp.statusText);
    }
    return resp;
  }

  // envs resolves to the sandbox's environment variables (the create's
  // envs among them).
  async envs() { return (await this.get('/envs')).json(); }

  // download resolves to the file at path as a Blob.
  async download(path) {
    return (await this.get('/files', this.user ? {path, username: this.user} : {path})).blob();
  }

  // exec runs cmd with args and envs to its end, or until timeoutMs has
  // passed, and resolves to {exitCode, stdout, stderr, error}.
  async exec(cmd, args, envs, timeoutMs) {
    const out = {exitCode: 0, stdout: '', stderr: '', error: ''};
    const dec = {stdout: new TextDecoder(), stderr: new TextDecoder()};
    const signal = AbortSignal.timeout(timeoutMs);
    for await (const msg of this.stream('Start', {process: {cmd, args, envs}}, signal)) {
      const ev = msg.event || {};
      for (const fd of ['stdout', 'stderr']) {
        if (ev.data && ev.data[fd]) out[fd] += dec[fd].decode(decodeBytes(ev.data[fd]), {stream: true});
      }
      if (ev.end) Object.assign(out, {exitCode: ev.end.exitCode || 0, error: ev.end.error || ''});
    }
    return out;
  }

  // unary calls process.Process/method with msg and returns the answer.
  async unary(method, msg) {
    const resp = await fetch(`/process.Process/${method}`,
      {method: 'POST', headers: this.headers('application/json'), body: JSON.stringify(msg)});
    const body = await resp.json().catch(() => ({}));
    if (!resp.ok) throw new EnvdError(body.code || resp.status, body.message || resp.statusText);
    return body;
  }

  // stream calls a server-streaming method and yields each message.
  async *stream(method, msg, signal) {
    const hd = this.headers('application/connect+json');
    hd['Keepalive-Ping-Interval'] = '50';
    const resp = await fetch(`/process.Process/${method}`, {method: 'POST', headers: hd, body: envelope(msg), signal});
    if (!resp.ok) {
      const body = await resp.json().catch(() => ({}));
      throw new EnvdError(body.code || resp.status, body.message || resp.statusText);
    }
    yield* frames(resp.body.getReader());
  }
}

// frames reads Connect envelopes from a byte stream.
async function* frames(reader) {
  let buf = new Uint8Array(0);
  for (;;) {
    while (buf.length >= 5) {
      const len = new DataView(buf.buffer, buf.byteOffset).getUint32(1);
      if (buf.length < 5 + len) break;
      const flags = buf[0];
      const msg = JSON.parse(new TextDecoder().decode(buf.subarray(5, 5 + len)) || '{}');
      buf = buf.slice(5 + len);
      if (flags & END_STREAM) {
        if (msg.error) throw new EnvdError(msg.error.code, msg.error.message || '');
        return;
      }
      yield msg;
    }
    const {value, done} = await reader.read();
    if (done) return;
    const next = new Uint8Array(buf.length + value.length);
    next.set(buf);
    next.set(value, buf.length);
    buf = next;
  }
}
