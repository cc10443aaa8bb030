// Bad input through the SDK: credentials, templates, unknown sandboxes.

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import { Sandbox, assertRejectsWith, sdk } from '../lib/env.mjs'

const { AuthenticationError, NotFoundError, SandboxError, SandboxNotFoundError } = sdk

// Well-formed (so that SDKs which validate the format send it) but not issued by the server.
const wrongKey = 'e2b_' + '0123456789abcdef'.repeat(3).slice(0, 40)
const unknownId = 'nosuchsandbox0e2e0000'

describe('bad input', { timeout: 60_000 }, () => {
  test('a wrong API key raises AuthenticationError', async () => {
    await assertRejectsWith(Sandbox.create({ apiKey: wrongKey, timeoutMs: 30_000 }), AuthenticationError)
    await assertRejectsWith(Sandbox.list({ apiKey: wrongKey }).nextItems(), AuthenticationError)
    await assertRejectsWith(Sandbox.kill(unknownId, { apiKey: wrongKey }), AuthenticationError)
    await assertRejectsWith(Sandbox.connect(unknownId, { apiKey: wrongKey }), AuthenticationError)
  })

  test('an unknown template is an error naming it', async () => {
    const name = 'no-such-template-e2e'
    await assertRejectsWith(Sandbox.create(name, { timeoutMs: 30_000 }), SandboxError, (err) => {
      assert.match(err.message, new RegExp(name))
      assert.equal(err.statusCode, 404)
    })
  })

  test('a negative timeout is rejected', async () => {
    await assertRejectsWith(Sandbox.create({ timeoutMs: -5_000 }), SandboxError, (err) => {
      assert.equal(err.statusCode, 400)
    })
  })

  test('connect to an unknown sandbox raises NotFoundError', async () => {
    await assertRejectsWith(Sandbox.connect(unknownId), NotFoundError)
  })

  test('kill of an unknown sandbox returns false', async () => {
    assert.equal(await Sandbox.kill(unknownId), false)
  })

  test('getInfo, setTimeout and getMetrics of an unknown sandbox raise SandboxNotFoundError', async () => {
    await assertRejectsWith(Sandbox.getInfo(unknownId), SandboxNotFoundError)
    await assertRejectsWith(Sandbox.setTimeout(unknownId, 60_000), SandboxNotFoundError)
    await assertRejectsWith(Sandbox.getMetrics(unknownId), SandboxNotFoundError)
  })
})
