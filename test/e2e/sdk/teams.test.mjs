// Teams through the official SDK: keys of two teams, made by the admin key
// over /api-keys. What one team's key made is, to the other's, a sandbox
// that does not exist: connect, getInfo, kill and list all say so, so its
// envd token never leaks; the owner keeps full use of it.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import { apiKey, apiUrl, assertRejectsWith, sdk, Sandbox, uniqueTag } from '../lib/env.mjs'

const { NotFoundError, SandboxNotFoundError } = sdk

async function newKey(team) {
  const res = await fetch(apiUrl + '/api-keys', {
    method: 'POST',
    headers: { 'X-API-KEY': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: uniqueTag('teams'), team }),
  })
  assert.equal(res.status, 201, await res.clone().text())
  const body = await res.json()
  return body
}

describe('teams', () => {
  let alpha, beta, sbx
  before(async () => {
    alpha = await newKey(uniqueTag('alpha'))
    beta = await newKey(uniqueTag('beta'))
    sbx = await Sandbox.create({ apiKey: alpha.key, timeoutMs: 120_000 })
  })
  after(async () => {
    await sbx?.kill()
    for (const k of [alpha, beta]) {
      if (k) await fetch(`${apiUrl}/api-keys/${k.id}`, { method: 'DELETE', headers: { 'X-API-KEY': apiKey } })
    }
  })

  test("another team's key cannot find the sandbox", async () => {
    await assertRejectsWith(Sandbox.connect(sbx.sandboxId, { apiKey: beta.key }), NotFoundError)
    await assertRejectsWith(Sandbox.getInfo(sbx.sandboxId, { apiKey: beta.key }), SandboxNotFoundError)
    assert.equal(await Sandbox.kill(sbx.sandboxId, { apiKey: beta.key }), false)
    const listed = await Sandbox.list({ apiKey: beta.key }).nextItems()
    assert.ok(!listed.some((s) => s.sandboxId === sbx.sandboxId), 'listed to another team')
  })

  test('the owner still uses it', async () => {
    const again = await Sandbox.connect(sbx.sandboxId, { apiKey: alpha.key })
    const r = await again.commands.run('echo owned')
    assert.equal(r.stdout.trim(), 'owned')
    const listed = await Sandbox.list({ apiKey: alpha.key }).nextItems()
    assert.ok(listed.some((s) => s.sandboxId === sbx.sandboxId))
  })

  test('the admin key sees every team', async () => {
    const info = await Sandbox.getInfo(sbx.sandboxId)
    assert.equal(info.sandboxId, sbx.sandboxId)
  })
})
