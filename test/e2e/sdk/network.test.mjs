// Network settings through the official SDK: private sandboxes (a traffic
// token for every port but envd's), maskRequestHost, live egress updates and
// the configurations this server refuses. Whether egress rules hold in the
// kernel is checked by the runtime conformance suite, against a server in a
// network namespace of the test's own; requests here go only to
// E2B_SANDBOX_URL (loopback).

import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'

import { Sandbox, Sandboxes, sandboxUrl, waitFor } from '../lib/env.mjs'

const pool = new Sandboxes()
after(() => pool.killAll())

// A server that answers every GET with the Host header it received.
const hostEcho = `python3 -c '
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(self.headers["Host"].encode())
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("0.0.0.0", 8000), H).serve_forever()'`

function get(sbx, headers = {}) {
  return fetch(sandboxUrl + '/', {
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '8000', ...headers },
  })
}

describe('network settings', { timeout: 120_000 }, () => {
  test('a private sandbox wants its traffic token on user ports; the Host is masked', async () => {
    const sbx = await pool.create({
      timeoutMs: 60_000,
      network: { allowPublicTraffic: false, maskRequestHost: 'app.internal:${PORT}' },
    })
    assert.ok(sbx.trafficAccessToken, 'create returns a traffic access token')
    await sbx.commands.run(hostEcho, { background: true, timeoutMs: 0 })
    const token = sbx.trafficAccessToken
    const res = await waitFor(async () => {
      const r = await get(sbx, { 'E2b-Traffic-Access-Token': token })
      return r.status === 200 ? r : null
    }, { message: 'the echo server answering' })
    assert.equal(await res.text(), 'app.internal:8000')
    assert.equal((await get(sbx)).status, 403, 'no token')
    assert.equal((await get(sbx, { 'E2b-Traffic-Access-Token': 'wrong' })).status, 403, 'wrong token')
    // envd's port is exempt: the SDK itself works without the header.
    assert.equal((await sbx.commands.run('echo ok')).stdout, 'ok\n')
  })

  test('a public sandbox has no traffic token', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    assert.equal(sbx.trafficAccessToken, undefined)
  })

  test('egress rules are set at create and replaced live', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000, network: { denyOut: ['0.0.0.0/0'], allowOut: ['10.0.0.0/8'] } })
    let info = await Sandbox.getInfo(sbx.sandboxId)
    assert.deepEqual(info.network?.denyOut, ['0.0.0.0/0'])
    await sbx.updateNetwork({ denyOut: ['192.168.0.0/16'] })
    info = await Sandbox.getInfo(sbx.sandboxId)
    assert.deepEqual(info.network?.denyOut, ['192.168.0.0/16'])
    assert.equal(info.network?.allowOut, undefined, 'fields left out of an update are cleared')
    assert.equal((await sbx.commands.run('echo still here')).stdout, 'still here\n')
  })

  test('domain rules: a name not allowed gets 403 from the egress proxy', async () => {
    // Everything is denied but one name. The request goes to a TEST-NET-2
    // address: nftables redirects it to warren's proxy on the gateway, which
    // refuses the Host before any lookup, so nothing leaves the host.
    const sbx = await pool.create({ timeoutMs: 60_000, network: { denyOut: ['0.0.0.0/0'], allowOut: ['api.example.com'] } })
    const r = await sbx.commands.run('curl -s -m 5 -H "Host: other.example.org" -w " %{http_code}" http://198.51.100.7/', { timeoutMs: 15_000 })
    assert.match(r.stdout, /egress to "other.example.org" refused.* 403$/s)
    await sbx.updateNetwork({ allowOut: ['*.example.com'], denyOut: ['0.0.0.0/0'] })
    const info = await Sandbox.getInfo(sbx.sandboxId)
    assert.deepEqual(info.network?.allowOut, ['*.example.com'])
  })

  test('refused configurations say why', async () => {
    await assert.rejects(pool.create({ timeoutMs: 10_000, network: { denyOut: ['example.com'] } }), /only allowOut takes domains/)
    await assert.rejects(pool.create({ timeoutMs: 10_000, network: { denyOut: ['not-a-range'] } }), /not an IP address or CIDR/)
    const sbx = await pool.create({ timeoutMs: 60_000 })
    await assert.rejects(Sandbox.updateNetwork('nosuchsandbox0000000', { denyOut: ['0.0.0.0/0'] }), /not found/i)
  })
})
