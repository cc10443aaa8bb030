// The official SDK against a `warren serve --tls` found only through its
// domain, as a user with wildcard DNS and warren's CA would have it: no
// E2B_API_URL or E2B_SANDBOX_URL, so the SDK reaches https://api.<domain>
// and https://<port>-<id>.<domain> on port 443 (resolve.mjs maps the names
// to the server's loopback address). Run by TestTLSHostRoutingSDK.

import assert from 'node:assert/strict'
import { after, test } from 'node:test'

// Refuse to run without the test's own domain: the SDK would otherwise
// talk to E2B's cloud.
if (!process.env.WARREN_TLS_DOMAIN || process.env.E2B_DOMAIN !== process.env.WARREN_TLS_DOMAIN) {
  throw new Error('E2B_DOMAIN and WARREN_TLS_DOMAIN must name the test server\'s domain (see tls_sdk_test.go)')
}
const { Sandbox } = await import(process.env.E2E_SDK || 'e2b')

async function waitFor(check, { timeoutMs, message }) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

const made = []
after(async () => {
  await Promise.all(made.map((s) => s.kill().catch(() => {})))
})

async function create(opts) {
  const sbx = await Sandbox.create({ timeoutMs: 120_000, ...opts })
  made.push(sbx)
  return sbx
}

// serve starts a Python server on port in the sandbox and waits until
// getHost(port) answers through warren over https.
async function serve(sbx, port) {
  await sbx.files.write('/tmp/www/index.html', `hello over tls from ${port}`)
  const server = await sbx.commands.run(`cd /tmp/www && exec python3 -m http.server ${port}`, { background: true, timeoutMs: 0 })
  // The open output stream is traffic too: it would resume a paused sandbox.
  await server.disconnect()
  const url = `https://${sbx.getHost(port)}/`
  await waitFor(async () => (await fetch(url).catch(() => ({ ok: false }))).ok, {
    timeoutMs: 20_000,
    message: `${url} to answer`,
  })
  return url
}

test('commands, files and getHost over https by Host name', async () => {
  const sbx = await create()
  assert.match(sbx.getHost(8000), new RegExp(`^8000-${sbx.sandboxId}\\.${process.env.WARREN_TLS_DOMAIN}$`))
  assert.equal((await sbx.commands.run('echo tls')).stdout, 'tls\n')
  await sbx.files.write('/tmp/f.txt', 'over tls')
  assert.equal(await sbx.files.read('/tmp/f.txt'), 'over tls')
  const url = await serve(sbx, 8000)
  const res = await fetch(url)
  assert.equal(res.status, 200)
  assert.equal(await res.text(), 'hello over tls from 8000')
  const listed = await Sandbox.list().nextItems()
  assert.ok(listed.some((s) => s.sandboxId === sbx.sandboxId))
})

test('traffic to a paused sandbox with autoResume resumes it, over https', async () => {
  const sbx = await create({ lifecycle: { onTimeout: 'pause', autoResume: true } })
  const url = await serve(sbx, 8001)
  await sbx.pause()
  assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused')
  const res = await fetch(url)
  assert.equal(res.status, 200)
  assert.equal(await res.text(), 'hello over tls from 8001')
  assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'running')
})
