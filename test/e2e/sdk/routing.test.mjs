// Sandbox traffic routing on the one listener: by the E2b-Sandbox-Id and
// E2b-Sandbox-Port headers, and by Host "<port>-<id>.<domain>" as getHost
// returns it. Requests go only to E2B_SANDBOX_URL (loopback in the suite);
// the Host header carries the sandbox name.

import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'

import { Sandbox, Sandboxes, sandboxUrl, usesV2Paths, waitFor } from '../lib/env.mjs'

const pool = new Sandboxes()
let sbx
let serverStderr = ''
const userPort = 8000

before(async () => {
  sbx = await pool.create({ timeoutMs: 120_000 })
  await sbx.files.write('/tmp/www/index.html', 'hello from port 8000')
  await sbx.commands.run(`cd /tmp/www && exec python3 -m http.server ${userPort}`, {
    background: true,
    timeoutMs: 0,
    onStderr: (d) => {
      serverStderr += d
    },
  })
})
after(() => pool.killAll())

/** request sends one HTTP request to the server behind E2B_SANDBOX_URL with the given Host header. */
function request({ method = 'GET', path = '/', host, headers = {}, body }) {
  const target = new URL(sandboxUrl)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port || 80,
        method,
        path,
        headers: { ...(host && { Host: host }), ...headers },
      },
      (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString() }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** waitForUserServer waits until the sandbox's python http.server answers through the proxy. */
async function waitForUserServer() {
  let last
  try {
    return await waitFor(
      async () => {
        last = await request({ path: '/index.html', headers: routingHeaders(sbx.sandboxId, userPort) })
        return last.status === 200 ? last : undefined
      },
      { timeoutMs: 20_000, intervalMs: 300, message: 'the python http.server to answer through the proxy' },
    )
  } catch (err) {
    assert.fail(`${err.message}; last response: ${last?.status} ${last?.text}; server stderr: ${JSON.stringify(serverStderr.slice(-400))}`)
  }
}

function routingHeaders(id, port) {
  return { 'E2b-Sandbox-Id': id, 'E2b-Sandbox-Port': String(port) }
}

describe('routing', { timeout: 60_000, skip: new URL(sandboxUrl).protocol !== 'http:' && 'needs a plain HTTP E2B_SANDBOX_URL' }, () => {
  test('headers route to a user port', async () => {
    const res = await waitForUserServer()
    assert.equal(res.text, 'hello from port 8000')
  })

  test('Host <port>-<id>.<domain> routes to a user port', async () => {
    await waitForUserServer()
    const res = await request({ path: '/index.html', host: sbx.getHost(userPort) })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.text, 'hello from port 8000')
  })

  test('Host routing reaches envd /health', async () => {
    const res = await request({ path: '/health', host: sbx.getHost(49983) })
    assert.equal(res.status, 204, res.text)
  })

  test('a closed port answers 502 JSON naming the port', async () => {
    for (const res of [
      await request({ path: '/', host: sbx.getHost(5999) }),
      await request({ path: '/', headers: routingHeaders(sbx.sandboxId, 5999) }),
    ]) {
      assert.equal(res.status, 502, res.text)
      const body = JSON.parse(res.text)
      assert.equal(body.code, 502)
      assert.equal(body.port, 5999)
      assert.equal(body.sandboxId, sbx.sandboxId)
      assert.equal(typeof body.message, 'string')
    }
  })

  test('an unknown sandbox answers 502 JSON', async () => {
    for (const res of [
      await request({ path: '/health', host: `49983-nosuchsandbox0000.${sbx.sandboxDomain}` }),
      await request({ path: '/health', headers: routingHeaders('nosuchsandbox0000', 49983) }),
    ]) {
      assert.equal(res.status, 502, res.text)
      const body = JSON.parse(res.text)
      assert.equal(body.code, 502)
      assert.equal(body.sandboxId, 'nosuchsandbox0000')
    }
  })

  test('envd requires the access token', async () => {
    const call = (token) =>
      request({
        method: 'POST',
        path: '/process.Process/List',
        headers: {
          ...routingHeaders(sbx.sandboxId, 49983),
          'Content-Type': 'application/json',
          'Connect-Protocol-Version': '1',
          ...(token && { 'X-Access-Token': token }),
        },
        body: '{}',
      })

    const missing = await call()
    assert.equal(missing.status, 401, missing.text)
    assert.equal(JSON.parse(missing.text).code, 401)
    assert.equal((await call('wrong-token')).status, 401)

    const ok = await call(sbx.envdAccessToken)
    assert.equal(ok.status, 200, ok.text)
    assert.ok(Array.isArray(JSON.parse(ok.text).processes))

    const health = await request({ path: '/health', headers: routingHeaders(sbx.sandboxId, 49983) })
    assert.equal(health.status, 204, '/health is exempt from the token')
  })

  test('envd /envs returns the sandbox env vars', async () => {
    const withEnvs = await pool.create({ timeoutMs: 60_000, envs: { E2E_ENVS: 'listed' } })
    const res = await request({
      path: '/envs',
      headers: { ...routingHeaders(withEnvs.sandboxId, 49983), 'X-Access-Token': withEnvs.envdAccessToken },
    })
    assert.equal(res.status, 200, res.text)
    assert.equal(JSON.parse(res.text).E2E_ENVS, 'listed')
  })

  test('a killed sandbox answers 502 on every route', async () => {
    const doomed = await pool.create({ timeoutMs: 60_000 })
    const host = doomed.getHost(49983)
    assert.equal((await request({ path: '/health', host })).status, 204)
    await doomed.kill()
    const byHost = await request({ path: '/health', host })
    assert.equal(byHost.status, 502, byHost.text)
    const byHeader = await request({ path: '/health', headers: routingHeaders(doomed.sandboxId, 49983) })
    assert.equal(byHeader.status, 502, byHeader.text)
    assert.equal(JSON.parse(byHeader.text).code, 502)
  })
})

describe('network.httpsPorts', { timeout: 60_000, skip: (!usesV2Paths && 'httpsPorts came with SDK 2.51') || (new URL(sandboxUrl).protocol !== 'http:' && 'needs a plain HTTP E2B_SANDBOX_URL') }, () => {
  test('a listed port is reached over TLS (self-signed), and info echoes it', async () => {
    const tls = await pool.create({ timeoutMs: 60_000, network: { httpsPorts: [8443] } })
    assert.deepEqual((await Sandbox.getInfo(tls.sandboxId)).network?.httpsPorts, [8443])
    await tls.commands.run(
      'cd /tmp && openssl req -x509 -newkey rsa:2048 -nodes -keyout k.pem -out c.pem -days 1 -subj /CN=sandbox 2>/dev/null && mkdir -p www && echo "hello over tls" > www/index.html',
    )
    const serve = `cd /tmp/www && exec python3 -c 'import http.server, ssl
s = http.server.HTTPServer(("0.0.0.0", 8443), http.server.SimpleHTTPRequestHandler)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain("/tmp/c.pem", "/tmp/k.pem")
s.socket = c.wrap_socket(s.socket, server_side=True); s.serve_forever()'`
    await tls.commands.run(serve, { background: true, timeoutMs: 0 })
    const res = await waitFor(
      async () => {
        const r = await request({ path: '/index.html', headers: routingHeaders(tls.sandboxId, 8443) })
        return r.status === 200 ? r : undefined
      },
      { timeoutMs: 20_000, intervalMs: 300, message: 'the TLS server to answer through the proxy' },
    )
    assert.equal(res.text, 'hello over tls\n')
  })
})
