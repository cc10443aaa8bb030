// The dashboard's entry point: sign-in, the hash router (#/sandboxes,
// #/sandboxes/ID, #/templates, #/templates/ID, #/volumes, #/keys, #/usage)
// and the banner that shows errors no page caught.

import {onUnauthorized} from './api.js';
import {keyFromURL, loginPage, signIn, signedIn, signOut} from './auth.js';
import {errorBox, replace} from './dom.js';
import * as sandboxes from './sandboxes.js';
import * as sandbox from './sandbox.js';
import * as templates from './templates.js';
import * as template from './template.js';
import * as volumes from './volumes.js';
import * as keys from './keys.js';
import * as usage from './usage.js';

const main = document.getElementById('main');
const banner = document.getElementById('banner');
const nav = document.getElementById('nav');
const signout = document.getElementById('signout');

const routes = [
  [/^#\/sandboxes\/([a-z0-9]+)$/, sandbox],
  [/^#\/templates\/([^/]+)$/, template],
  [/^#\/templates$/, templates],
  [/^#\/volumes$/, volumes],
  [/^#\/keys$/, keys],
  [/^#\/usage$/, usage],
  [/^#\/sandboxes$/, sandboxes],
];

let cleanup = null;

function showBanner(msg) {
  banner.textContent = msg;
  banner.hidden = !msg;
}

// signInFromURL signs in with /dashboard/#key=KEY, if the URL has one; it
// reports whether routing may go on.
async function signInFromURL() {
  const key = keyFromURL();
  if (!key) return true;
  try {
    await signIn(key);
    return true;
  } catch (e) {
    loginPage(main, route, e.unauthorized ? 'The key in the link was refused.' : e.message);
    return false;
  }
}

async function route() {
  if (cleanup) { try { cleanup(); } catch { /* a page's own teardown */ } cleanup = null; }
  showBanner('');
  if (!await signInFromURL()) return;
  const signed = signedIn();
  nav.hidden = signout.hidden = !signed;
  if (!signed) {
    loginPage(main, route);
    return;
  }
  const hash = location.hash || '#/sandboxes';
  const [re, page] = routes.find(([re]) => re.test(hash)) || [/^/, sandboxes];
  const args = hash.match(re).slice(1).map(decodeURIComponent);
  for (const a of nav.querySelectorAll('a')) {
    a.classList.toggle('active', hash.startsWith(`#/${a.dataset.page}`));
  }
  try {
    cleanup = await page.render(main, ...args) || null;
  } catch (e) {
    replace(main, errorBox(e));
  }
}

async function start() {
  onUnauthorized(() => {
    if (cleanup) { cleanup(); cleanup = null; }
    signOut();
    nav.hidden = signout.hidden = true;
    loginPage(main, route, 'The server refused the key (revoked or expired?): sign in again.');
  });
  signout.addEventListener('click', () => { signOut(); route(); });
  window.addEventListener('hashchange', route);
  window.addEventListener('unhandledrejection', (ev) => showBanner(ev.reason && ev.reason.message || String(ev.reason)));
  window.addEventListener('error', (ev) => showBanner(ev.message));
  route();
}

start();
