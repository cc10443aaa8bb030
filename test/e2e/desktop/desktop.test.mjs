// The official @e2b/desktop SDK against warren's `desktop` template, found
// through the domain only (TLS + Host routing, as against E2B): start-up at
// a chosen size, screenshots of the real screen, mouse and keyboard, the
// text editor and the browser, windows, pause/resume and the noVNC stream.
// The stream is left running with a password; the Go side opens its URL in
// headless Chromium (desktop_test.go), reading it from E2E_STREAM_OUT.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, describe, test } from 'node:test'

import { Sandbox } from '@e2b/desktop'

import { changedPixels, decodePNG } from './png.mjs'

const WIDTH = 1280
const HEIGHT = 800
const STEP_MS = 180_000

let desk
before(async () => {
  // Private: every port but envd's wants the traffic token, which the
  // browser on the Go side passes once in the URL (warren's extension).
  desk = await Sandbox.create({
    resolution: [WIDTH, HEIGHT], dpi: 96, timeoutMs: 20 * 60_000, network: { allowPublicTraffic: false },
  })
  assert.ok(desk.trafficAccessToken, 'a private sandbox has a traffic token')
}, { timeout: STEP_MS })
after(async () => {
  // The Go side kills the sandbox once it has opened the stream.
  if (desk && !process.env.E2E_STREAM_OUT) await desk.kill()
})

// until polls fn until it returns a truthy value or timeoutMs passes.
async function until(what, fn, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  let last
  while (Date.now() < deadline) {
    try {
      const v = await fn()
      if (v) return v
    } catch (err) {
      last = err
    }
    await new Promise((r) => setTimeout(r, 500))
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`)
}

// windowsOf lists cls's visible windows; the SDK gives [''] for none.
async function windowsOf(cls) {
  return (await desk.getApplicationWindows(cls).catch(() => [])).filter(Boolean)
}

async function geometry(id) {
  const out = (await desk.commands.run(`xdotool getwindowgeometry --shell ${id}`)).stdout
  const g = Object.fromEntries(out.trim().split('\n').map((l) => l.split('=')).map(([k, v]) => [k, Number(v)]))
  return { x: g.X, y: g.Y, w: g.WIDTH, h: g.HEIGHT }
}

describe('@e2b/desktop', { concurrency: false, timeout: 15 * 60_000 }, () => {
  test('the screen has the size asked for, and screenshots are PNGs of it', { timeout: STEP_MS }, async () => {
    assert.deepEqual(await desk.getScreenSize(), { width: WIDTH, height: HEIGHT })
    const png = decodePNG(await desk.screenshot())
    assert.deepEqual([png.width, png.height], [WIDTH, HEIGHT])
    const blob = await desk.screenshot('blob')
    assert.equal(blob.type === '' || blob.type.startsWith('image/') || blob.type === 'application/octet-stream', true)
  })

  test('mouse: move, clicks, drag and scroll; the cursor is where it was sent', { timeout: STEP_MS }, async () => {
    await desk.moveMouse(321, 234)
    assert.deepEqual(await desk.getCursorPosition(), { x: 321, y: 234 })
    await desk.leftClick(600, 500)
    assert.deepEqual(await desk.getCursorPosition(), { x: 600, y: 500 })
    await desk.rightClick(610, 510)
    await desk.press('escape') // close the desktop's menu
    await desk.middleClick()
    await desk.doubleClick(640, 520)
    await desk.drag([100, 600], [200, 650])
    assert.deepEqual(await desk.getCursorPosition(), { x: 200, y: 650 })
    await desk.mousePress('left')
    await desk.mouseRelease('left')
    await desk.scroll('down', 2)
    await desk.scroll('up', 1)
  })

  test('the text editor: typed text (unicode too) changes the window\'s pixels', { timeout: STEP_MS }, async () => {
    await desk.launch('org.xfce.mousepad')
    const win = await until('a mousepad window', async () => (await windowsOf('mousepad'))[0])
    assert.match(await desk.getWindowTitle(win), /Mousepad/)
    // A click in the text area gives the editor the focus, as an agent
    // would give it.
    const g = await geometry(win)
    await desk.leftClick(g.x + Math.floor(g.w / 2), g.y + Math.floor(g.h / 2))
    await until('mousepad focused', async () => (await desk.getCurrentWindowId()) === win)
    const before = decodePNG(await desk.screenshot())
    await desk.write('Hello from warren: ü é ✓')
    await desk.press('enter')
    await desk.write('second line')
    const after = decodePNG(await desk.screenshot())
    // The title gains a '*' and the text area its two lines; nothing
    // outside the window changes (the pointer stays where it was).
    const inside = changedPixels(before, after, g)
    assert.ok(inside > 300, `only ${inside} pixels of the editor changed`)
    const below = { x: 0, y: Math.min(g.y + g.h + 10, HEIGHT - 40), w: 400, h: 30 }
    assert.equal(changedPixels(before, after, below), 0, 'pixels outside the editor changed')
    await until('the modified title', async () => (await desk.getWindowTitle(win)).startsWith('*'))
    await desk.press(['ctrl', 'a'])
    await desk.press('delete')
  })

  test('open() a file shows it in the editor', { timeout: STEP_MS }, async () => {
    await desk.files.write('/home/user/warren-note.txt', 'a note from warren\n')
    await desk.open('/home/user/warren-note.txt')
    await until('a window titled warren-note.txt', async () => {
      for (const w of await windowsOf('mousepad')) {
        if ((await desk.getWindowTitle(w)).includes('warren-note.txt')) return true
      }
      return false
    })
  })

  test('the browser opens a page served from inside the sandbox', { timeout: 200_000 }, async () => {
    await desk.files.write('/tmp/www/index.html',
      '<!doctype html><title>warren-desktop-page</title><h1 style="font-size:80px">Served inside</h1>')
    await desk.commands.run('cd /tmp/www && exec python3 -m http.server 8000', { background: true, timeoutMs: 0 })
    await until('the page server', async () => (await desk.commands.run('curl -sf http://127.0.0.1:8000/')).exitCode === 0)
    await desk.launch('firefox-esr', 'http://127.0.0.1:8000/')
    const titled = (title) => async () => {
      for (const w of await windowsOf('firefox')) {
        if ((await desk.getWindowTitle(w)).includes(title)) return true
      }
      return false
    }
    await until('a firefox window titled warren-desktop-page', titled('warren-desktop-page'), 150_000)
    // open() of a URL goes to the default browser, here the running one.
    await desk.files.write('/tmp/www/second.html', '<!doctype html><title>warren-second-page</title><p>second')
    await desk.open('http://127.0.0.1:8000/second.html')
    await until('the second page in firefox', titled('warren-second-page'), 60_000)
  })

  test('pause and resume keep the open windows', { timeout: STEP_MS }, async () => {
    const before = await windowsOf('mousepad')
    assert.ok(before.length > 0)
    await desk.pause()
    desk = await Sandbox.connect(desk.sandboxId)
    assert.deepEqual(await windowsOf('mousepad'), before)
    const png = decodePNG(await desk.screenshot())
    assert.deepEqual([png.width, png.height], [WIDTH, HEIGHT])
  })

  test('a snapshot starts a desktop with the same windows (runsc) or a fresh one (runc)', { timeout: STEP_MS }, async () => {
    const before = await windowsOf('mousepad')
    const snap = await desk.createSnapshot()
    // @e2b/desktop's create starts Xvfb and XFCE again: on runsc the
    // restored X server is already there and the SDK's checks pass on it;
    // runc's snapshots hold the disk only, so the copy starts afresh.
    const copy = await Sandbox.create(snap.snapshotId, { resolution: [WIDTH, HEIGHT], timeoutMs: 5 * 60_000 })
    try {
      const after = (await copy.getApplicationWindows('mousepad').catch(() => [])).filter(Boolean)
      assert.deepEqual(after, process.env.E2E_RUNTIME === 'runsc' ? before : [])
      const png = decodePNG(await copy.screenshot())
      assert.deepEqual([png.width, png.height], [WIDTH, HEIGHT])
    } finally {
      await copy.kill()
      await Sandbox.deleteSnapshot(snap.snapshotId)
    }
  })

  test('stream: one window, then stop', { timeout: STEP_MS }, async () => {
    const [win] = await windowsOf('mousepad')
    await desk.stream.start({ windowId: win })
    const args = (await desk.commands.run('pgrep -a x11vnc')).stdout
    assert.match(args, new RegExp(`-id ${win}`))
    const url = new URL(desk.stream.getUrl())
    assert.equal(url.hostname, desk.getHost(6080))
    assert.equal((await fetch(url)).status, 403, 'the stream of a private sandbox without the token')
    const res = await fetch(url, { headers: { 'e2b-traffic-access-token': desk.trafficAccessToken } })
    assert.equal(res.status, 200)
    assert.match(await res.text(), /noVNC/)
    await desk.stream.stop()
    await until('x11vnc gone', async () => (await desk.commands.run('pgrep -x x11vnc').catch((e) => e.result)).exitCode === 1)
  })

  test('stream: with a password, left running for the browser', { timeout: STEP_MS }, async () => {
    await desk.stream.start({ requireAuth: true })
    const key = desk.stream.getAuthKey()
    assert.match(key, /^[A-Za-z0-9]{16}$/)
    const url = desk.stream.getUrl({ authKey: key })
    assert.equal(new URL(url).searchParams.get('password'), key)
    if (process.env.E2E_STREAM_OUT) {
      // VNC authentication reads 8 characters: change every one of them.
      const wrong = desk.stream.getUrl({ authKey: [...key.slice(0, 8)].map((c) => (c === 'x' ? 'y' : 'x')).join('') })
      fs.writeFileSync(process.env.E2E_STREAM_OUT, JSON.stringify({
        sandboxID: desk.sandboxId, url, wrong, width: WIDTH, height: HEIGHT, trafficToken: desk.trafficAccessToken,
      }))
    }
  })
})
