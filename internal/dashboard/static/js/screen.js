// The screen of a desktop sandbox: every few seconds, while the panel and
// the tab are in view, envd runs scrot as the desktop's user and the page
// downloads the picture through envd's /files, as the SDKs' screenshot()
// does. No stream is needed, so it works without wildcard DNS.

import {Envd} from './envd.js';
import {h, section} from './dom.js';

const INTERVAL_MS = 2000;
const EXEC_TIMEOUT_MS = 15000;
const SHOT = '/tmp/.warren-screen.png';
const DESKTOP_USER = 'user'; // the desktop template's user, who owns the X session
const NOVNC_PORT = 6080; // @e2b/desktop's stream.start() serves noVNC there

// isDesktop: the sandbox was made from the desktop template.
export function isDesktop(sb) {
  return sb.templateID === 'desktop' || sb.alias === 'desktop';
}

// screenError turns a failed scrot into what the user should know.
export function screenError(r) {
  const text = `${r.stderr} ${r.error}`.trim();
  if (/can't open x display/i.test(text)) return 'no display: the desktop has not started';
  return `screenshot failed: ${text || `exit status ${r.exitCode}`}`;
}

// screenPanel returns {el, close}. For a running sandbox whose template is
// desktop, or whose environment has DISPLAY (the SDK's create sets it),
// the panel shows the screen; otherwise el stays hidden. close stops it.
export function screenPanel(sb) {
  const img = h('img', {id: 'screen-img', class: 'screen', alt: 'the sandbox\'s screen', hidden: true});
  const status = h('span', {class: 'muted small', id: 'screen-status'}, 'waiting for the first picture');
  const pause = h('button', {id: 'screen-pause'}, 'Pause');
  const refresh = h('button', {id: 'screen-refresh'}, 'Refresh');
  const live = h('a', {id: 'screen-live', target: '_blank', rel: 'noopener noreferrer', hidden: true}, 'Open live stream');
  const el = section('Screen', h('div', {class: 'toolbar'}, pause, refresh, live, status), img);
  el.id = 'screen';
  el.hidden = true;
  if (sb.state !== 'running') return {el, close: () => {}};

  const envd = new Envd(sb.sandboxID, sb.envdAccessToken, DESKTOP_USER);
  const loop = shotLoop(envd, img, status);
  pause.addEventListener('click', () => {
    loop.paused = !loop.paused;
    pause.textContent = loop.paused ? 'Resume' : 'Pause';
    status.textContent = loop.paused ? 'paused' : 'resuming';
    loop.kick();
  });
  refresh.addEventListener('click', () => { loop.kick(true); checkStream(sb, live); });
  // data-display tells what was found: the display shown, or none.
  const start = (display) => {
    loop.display = display;
    el.dataset.display = display;
    el.hidden = false;
    loop.watch(el);
    checkStream(sb, live);
  };
  if (isDesktop(sb)) {
    start(':0');
  } else {
    envd.envs().then((envs) => {
      if (loop.closed) return;
      if (envs && envs.DISPLAY) start(envs.DISPLAY);
      else el.dataset.display = 'none';
    }, () => { el.dataset.display = 'none'; });
  }
  return {el, close: loop.close};
}

// shotLoop takes a picture every INTERVAL_MS while el is on screen, the
// tab is visible and the loop is not paused; kick(true) takes one now,
// even when paused.
function shotLoop(envd, img, status) {
  let timer = null;
  let busy = false;
  let inView = false;
  let url = null;
  let observer = null;
  const loop = {paused: false, closed: false, display: ':0'};
  // A tick while a picture is being taken does nothing: that one's end
  // schedules the next.
  const tick = async (force = false) => {
    if (loop.closed || busy) return;
    clearTimeout(timer);
    if (force || (!loop.paused && inView && document.visibilityState === 'visible')) {
      busy = true;
      try {
        show(await capture(envd, loop.display));
      } catch (e) {
        if (!loop.closed) status.textContent = e.message;
      } finally {
        busy = false;
      }
    }
    if (!loop.closed) timer = setTimeout(tick, INTERVAL_MS);
  };
  // show puts a picture in place of the last one, whose URL it frees.
  const show = (blob) => {
    if (loop.closed) return;
    const old = url;
    url = URL.createObjectURL(blob);
    img.src = url;
    img.hidden = false;
    if (old) URL.revokeObjectURL(old);
    img.dataset.shots = +(img.dataset.shots || 0) + 1;
    status.textContent = `${loop.paused ? 'paused; ' : ''}taken ${new Date().toLocaleTimeString()}`;
  };
  const onVisibility = () => tick();
  loop.kick = (force) => tick(force);
  loop.watch = (el) => {
    observer = new IntersectionObserver((entries) => {
      inView = entries.some((e) => e.isIntersecting);
      if (inView) tick();
    });
    observer.observe(el);
    document.addEventListener('visibilitychange', onVisibility);
  };
  loop.close = () => {
    loop.closed = true;
    clearTimeout(timer);
    if (observer) observer.disconnect();
    document.removeEventListener('visibilitychange', onVisibility);
    if (url) URL.revokeObjectURL(url);
  };
  return loop;
}

// capture has scrot write the screen to SHOT and downloads it.
async function capture(envd, display) {
  const r = await envd.exec('scrot', ['-o', '-p', SHOT], {DISPLAY: display}, EXEC_TIMEOUT_MS)
    .catch((e) => ({exitCode: -1, stderr: '', error: e.message}));
  if (r.exitCode !== 0 || r.error) throw new Error(screenError(r));
  return envd.download(SHOT).catch((e) => { throw new Error(`downloading the screenshot: ${e.message}`); });
}

// checkStream shows the "Open live stream" link when noVNC answers on its
// port and the server has a sandbox domain (the stream's page is served
// at 6080-<id>.<domain>, which needs wildcard DNS).
async function checkStream(sb, link) {
  if (!sb.domain) return;
  try {
    const resp = await fetch('/vnc.html', {cache: 'no-store',
      headers: {'E2b-Sandbox-Id': sb.sandboxID, 'E2b-Sandbox-Port': String(NOVNC_PORT)}});
    const port = location.port ? `:${location.port}` : '';
    link.href = `${location.protocol}//${NOVNC_PORT}-${sb.sandboxID}.${sb.domain}${port}/vnc.html?autoconnect=true&resize=scale`;
    link.hidden = !resp.ok;
  } catch {
    link.hidden = true;
  }
}
