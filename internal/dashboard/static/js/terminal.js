// A terminal in the browser over a PTY in the sandbox: xterm.js draws it,
// envd's process service runs /bin/bash -i -l on a PTY (Start), keys go in
// with SendInput and the size follows the element (ResizeObserver, the fit
// addon, then Update).

import {Terminal} from '../vendor/xterm/xterm.mjs';
import {FitAddon} from '../vendor/addon-fit/addon-fit.mjs';
import {Envd, decodeBytes, encodeBytes} from './envd.js';

// adoptStyles applies the <style> elements xterm.js creates inside el
// through a constructed stylesheet: the dashboard's CSP refuses inline
// styles, and constructed sheets are not inline.
function adoptStyles(el) {
  const sheet = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  const sync = () => {
    const css = [...el.querySelectorAll('style')].map((s) => s.textContent).join('\n');
    sheet.replaceSync(css);
  };
  const obs = new MutationObserver(sync);
  obs.observe(el, {subtree: true, childList: true, characterData: true});
  sync();
  return () => {
    obs.disconnect();
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
  };
}

// openTerminal starts a shell in the sandbox and shows it in el, telling
// onStatus how it goes ("shell running …" while it runs). It returns
// close(), which ends the shell and frees the terminal.
export function openTerminal(el, sandboxID, accessToken, onStatus = () => {}) {
  const envd = new Envd(sandboxID, accessToken);
  const term = new Terminal({cursorBlink: true, fontSize: 14, scrollback: 5000,
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", monospace', theme: {background: '#111418'}});
  const fit = new FitAddon();
  term.loadAddon(fit);
  const unstyle = adoptStyles(el);
  term.open(el);
  fit.fit();
  const abort = new AbortController();
  let pid = null;
  const input = inputQueue((data) => envd.unary('SendInput', {process: {pid}, input: {pty: encodeBytes(data)}}));
  term.onData((d) => { if (pid !== null) input(d); });
  let resizeTimer = null;
  term.onResize(({cols, rows}) => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (pid === null) return;
      envd.unary('Update', {process: {pid}, pty: {size: {cols, rows}}})
        .then(() => { el.dataset.ptySize = `${rows}x${cols}`; }, (e) => onStatus(`shell running (pid ${pid}); resize failed: ${e.message}`));
    }, 100);
  });
  const ro = new ResizeObserver(() => { try { fit.fit(); } catch { /* hidden */ } });
  ro.observe(el);
  run(envd, term, abort.signal, (p) => { pid = p; onStatus(`shell running (pid ${p})`); })
    .then(() => onStatus('shell ended'), (e) => {
      if (!abort.signal.aborted) { onStatus(`terminal error: ${e.message}`); term.write(`\r\n\x1b[31m${e.message}\x1b[0m\r\n`); }
    });
  term.focus();
  return () => {
    if (pid !== null) envd.unary('SendSignal', {process: {pid}, signal: 'SIGNAL_SIGKILL'}).catch(() => {});
    abort.abort();
    ro.disconnect();
    term.dispose();
    unstyle();
  };
}

async function run(envd, term, signal, started) {
  const req = {process: {cmd: '/bin/bash', args: ['-i', '-l'],
    envs: {TERM: 'xterm-256color', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8'}},
  pty: {size: {cols: term.cols, rows: term.rows}}};
  for await (const msg of envd.stream('Start', req, signal)) {
    const ev = msg.event || {};
    if (ev.start) started(ev.start.pid);
    if (ev.data && ev.data.pty) term.write(decodeBytes(ev.data.pty));
    if (ev.end) term.write(`\r\n[exited: ${ev.end.status || ev.end.error || 'done'}]\r\n`);
  }
}

// inputQueue sends keystrokes in order, batching what is typed while a
// send is in flight.
function inputQueue(send) {
  let pending = '';
  let busy = false;
  return async function push(data) {
    pending += data;
    if (busy) return;
    busy = true;
    while (pending) {
      const chunk = pending;
      pending = '';
      try { await send(chunk); } catch { /* the stream reports a dead shell */ }
    }
    busy = false;
  };
}
