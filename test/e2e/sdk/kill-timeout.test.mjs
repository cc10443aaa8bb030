// Ending sandboxes: kill, setTimeout and expiry, and what envd calls do afterwards.

import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'

import { Sandbox, Sandboxes, assertNear, assertRejectsWith, sdk, waitFor } from '../lib/env.mjs'

const { SandboxNotFoundError, TimeoutError } = sdk

const pool = new Sandboxes()
after(() => pool.killAll())

async function listedIds() {
  const ids = []
  const paginator = Sandbox.list()
  while (paginator.hasNext) {
    for (const s of await paginator.nextItems()) ids.push(s.sandboxId)
  }
  return ids
}

describe('Sandbox.kill', { timeout: 120_000 }, () => {
  test('returns true, then false for the same id', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    assert.equal(await Sandbox.kill(sbx.sandboxId), true)
    assert.equal(await Sandbox.kill(sbx.sandboxId), false)
    assert.equal(await sbx.kill(), false)
    assert.ok(!(await listedIds()).includes(sbx.sandboxId), 'killed sandbox is not listed')
    await assertRejectsWith(Sandbox.getInfo(sbx.sandboxId), SandboxNotFoundError)
  })

  test('instance kill works and envd calls fail afterwards', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    await sbx.files.write('/tmp/alive', 'yes')
    assert.equal(await sbx.kill(), true)

    assert.equal(await sbx.isRunning(), false, 'isRunning() after kill')
    // The proxy answers 502 for a dead sandbox: a Start RPC then maps to
    // SandboxNotFoundError, a unary RPC and /files to TimeoutError.
    await assertRejectsWith(sbx.commands.run('true'), SandboxNotFoundError)
    await assertRejectsWith(sbx.files.list('/tmp'), TimeoutError)
    await assertRejectsWith(sbx.files.read('/tmp/alive'), TimeoutError)
  })

  test('a command streaming when the sandbox is killed ends with an error', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    const handle = await sbx.commands.run('while true; do echo tick; sleep 0.2; done', {
      background: true,
      timeoutMs: 0,
    })
    await waitFor(() => handle.stdout.includes('tick'), { message: 'first tick' })
    await Sandbox.kill(sbx.sandboxId)
    await assertRejectsWith(handle.wait(), TimeoutError)
  })
})

describe('sandbox.setTimeout', { timeout: 120_000 }, () => {
  test('lengthens and shortens endAt', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })

    await sbx.setTimeout(600_000)
    assertNear((await sbx.getInfo()).endAt, Date.now() + 600_000, 10_000, 'endAt after setTimeout(600 s)')

    await sbx.setTimeout(45_000)
    assertNear((await sbx.getInfo()).endAt, Date.now() + 45_000, 10_000, 'endAt after setTimeout(45 s)')

    await Sandbox.setTimeout(sbx.sandboxId, 90_000)
    assertNear((await sbx.getInfo()).endAt, Date.now() + 90_000, 10_000, 'endAt after Sandbox.setTimeout(90 s)')
  })

  test('a short timeout ends the sandbox', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    assert.equal(await sbx.isRunning(), true)

    const start = Date.now()
    await sbx.setTimeout(3_000)
    await waitFor(async () => !(await sbx.isRunning()), {
      timeoutMs: 30_000,
      intervalMs: 500,
      message: 'isRunning() to turn false after setTimeout(3000)',
    })
    assert.ok(Date.now() - start >= 2_000, 'the sandbox did not end before its timeout')

    assert.ok(!(await listedIds()).includes(sbx.sandboxId), 'expired sandbox is not listed')
    assert.equal(await Sandbox.kill(sbx.sandboxId), false, 'kill of an expired sandbox')
  })

  test('a sandbox created with a short timeoutMs expires by itself', async () => {
    const sbx = await pool.create({ timeoutMs: 4_000 })
    assert.equal(await sbx.isRunning(), true)
    await waitFor(async () => !(await sbx.isRunning()), {
      timeoutMs: 30_000,
      intervalMs: 500,
      message: 'a 4 s sandbox to expire',
    })
  })
})
