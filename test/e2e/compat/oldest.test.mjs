// The oldest official SDK releases warren supports (the first 2.x and the
// last 1.x the npm registry serves), driven through the domain only, as
// those releases read no E2B_API_URL or E2B_SANDBOX_URL: create, commands,
// files, a PTY, ports over https, timeouts, connect, list and kill. Only
// calls both lines have are used. Run by TestOldestSDKs.

import assert from 'node:assert/strict'
import { after, test } from 'node:test'

if (!process.env.WARREN_TLS_DOMAIN || process.env.E2B_DOMAIN !== process.env.WARREN_TLS_DOMAIN) {
  throw new Error('E2B_DOMAIN and WARREN_TLS_DOMAIN must name the test server\'s domain (see tls_sdk_test.go)')
}
const sdk = await import(process.env.E2E_SDK)
const { Sandbox, CommandExitError } = sdk

const made = []
after(async () => {
  await Promise.all(made.map((s) => s.kill().catch(() => {})))
})

async function create(opts) {
  const sbx = await Sandbox.create({ timeoutMs: 120_000, ...opts })
  made.push(sbx)
  return sbx
}

// listed returns the running sandboxes: 1.x answers an array, 2.x a paginator.
async function listed() {
  const r = Sandbox.list()
  const v = await r
  return Array.isArray(v) ? v : await r.nextItems()
}

test('commands: output, exit codes, envs, cwd, background and kill', async () => {
  const sbx = await create({ envs: { FROM_CREATE: 'c' } })
  const r = await sbx.commands.run('echo "$FROM_CREATE $FOO $(pwd)"', { envs: { FOO: 'f' }, cwd: '/tmp' })
  assert.equal(r.stdout, 'c f /tmp\n')
  await assert.rejects(sbx.commands.run('echo out; exit 3'), (err) => {
    assert.ok(err instanceof CommandExitError, `got ${err}`)
    assert.equal(err.exitCode, 3)
    assert.equal(err.stdout, 'out\n')
    return true
  })
  const bg = await sbx.commands.run('sleep 60', { background: true })
  assert.ok((await sbx.commands.list()).some((p) => p.pid === bg.pid))
  assert.equal(await bg.kill(), true)
})

test('files: write, read, list, exists, remove', async () => {
  const sbx = await create()
  await sbx.files.write('/tmp/old/a.txt', 'alpha')
  assert.equal(await sbx.files.read('/tmp/old/a.txt'), 'alpha')
  assert.deepEqual((await sbx.files.list('/tmp/old')).map((e) => e.name), ['a.txt'])
  assert.equal(await sbx.files.exists('/tmp/old/a.txt'), true)
  await sbx.files.remove('/tmp/old/a.txt')
  assert.equal(await sbx.files.exists('/tmp/old/a.txt'), false)
})

test('a PTY echoes what it is sent', async () => {
  const sbx = await create()
  let out = ''
  const term = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { out += new TextDecoder().decode(d) } })
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('echo pty-$((6*7))\nexit\n'))
  await term.wait()
  assert.match(out, /pty-42/)
})

test('getHost over https, setTimeout, getInfo, connect, list and kill', async () => {
  const sbx = await create()
  await sbx.files.write('/tmp/www/index.html', 'old sdk')
  const server = await sbx.commands.run('cd /tmp/www && exec python3 -m http.server 8002', { background: true, timeoutMs: 0 })
  const url = `https://${sbx.getHost(8002)}/`
  const deadline = Date.now() + 20_000
  let res
  while (!(res = await fetch(url).catch(() => undefined))?.ok) {
    assert.ok(Date.now() < deadline, `${url} did not answer`)
    await new Promise((r) => setTimeout(r, 200))
  }
  assert.equal(await res.text(), 'old sdk')
  await server.kill()

  await sbx.setTimeout(90_000)
  const info = await Sandbox.getInfo(sbx.sandboxId)
  assert.equal(info.sandboxId, sbx.sandboxId)
  const left = new Date(info.endAt).getTime() - Date.now()
  assert.ok(left > 60_000 && left <= 91_000, `endAt ${info.endAt} is ${left} ms away`)

  const again = await Sandbox.connect(sbx.sandboxId)
  assert.equal((await again.commands.run('echo connected')).stdout, 'connected\n')
  assert.ok((await listed()).some((s) => s.sandboxId === sbx.sandboxId))
  assert.equal(await Sandbox.kill(sbx.sandboxId), true)
  assert.equal(await sbx.isRunning(), false)
})
