// Two server-side behaviours of E2B's newer API as the official SDK meets
// them: a create retried with the same Idempotency-Key (sent through the
// SDK's apiHeaders option) gets the first sandbox, and a pause keeps the
// sandbox's remaining lifetime for the resume.

import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'

import { Sandbox, Sandboxes, assertNear, sleep, uniqueTag, usesV2Paths } from '../lib/env.mjs'

const pool = new Sandboxes()
after(() => pool.killAll())

describe('retried creates and resumed lifetimes', { timeout: 120_000 }, () => {
  test('a create retried with one Idempotency-Key makes one sandbox', async () => {
    const tag = uniqueTag('idem')
    const opts = { timeoutMs: 60_000, metadata: { tag }, apiHeaders: { 'Idempotency-Key': tag } }
    const first = await pool.create(opts)
    const again = await pool.create(opts)
    assert.equal(again.sandboxId, first.sandboxId)
    const listed = await Sandbox.list({ query: { metadata: { tag } } }).nextItems()
    assert.equal(listed.length, 1)
  })

  test('connect without timeoutMs resumes with the lifetime left', async () => {
    const sbx = await pool.create({ timeoutMs: 120_000 })
    await sleep(2_000)
    assert.equal(await sbx.pause(), true)
    await sleep(2_000) // paused time does not count
    await Sandbox.connect(sbx.sandboxId)
    const info = await Sandbox.getInfo(sbx.sandboxId)
    // 2.51 sends no timeout: what was left. 2.50 sends its 300 s default,
    // which is more than was left, and a connect never shortens.
    const want = usesV2Paths ? 118_000 : 300_000
    assertNear(info.endAt, Date.now() + want, 10_000, 'endAt after connect()')
  })
})
