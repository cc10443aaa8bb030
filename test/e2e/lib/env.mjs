// Shared setup for the SDK tests: which SDK package to load, where the server
// is, and small helpers every test file uses.
//
// The SDK under test is the npm package named by E2E_SDK ("e2b" or
// "e2b-v250"), so the same test files exercise both the v2 (>= 2.51) and the
// v1 (<= 2.50) create/connect paths.

import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'

for (const name of ['E2B_API_KEY', 'E2B_API_URL', 'E2B_SANDBOX_URL']) {
  if (!process.env[name]) {
    // Refuse to run without an explicit server: the SDK would otherwise talk
    // to E2B's cloud.
    throw new Error(`${name} must be set (see test/e2e/README.md)`)
  }
}

export const sdkName = process.env.E2E_SDK || 'e2b'
export const sdk = await import(sdkName)
export const { Sandbox } = sdk

export const apiUrl = process.env.E2B_API_URL.replace(/\/+$/, '')
export const sandboxUrl = process.env.E2B_SANDBOX_URL.replace(/\/+$/, '')
export const apiKey = process.env.E2B_API_KEY

/**
 * The server's backend. runsc checkpoints memory, so snapshots and forks
 * continue the source's processes; runc freezes in place and its snapshots
 * hold the disk only.
 */
export const runtime = process.env.E2E_RUNTIME || 'runsc'
export const snapshotsKeepMemory = runtime === 'runsc'

/** True for the SDK versions that use the v2 create/connect paths. */
export const usesV2Paths = sdkName === 'e2b'

/** A tag unique to this test run, for metadata filters that must not see other files' sandboxes. */
export function uniqueTag(prefix = 'e2e') {
  return `${prefix}-${sdkName}-${randomBytes(6).toString('hex')}`
}

/**
 * Sandboxes tracks what a test file created and kills all of it at the end,
 * whatever happened in between.
 */
export class Sandboxes {
  #created = []

  async create(...args) {
    const sbx = await Sandbox.create(...args)
    this.#created.push(sbx.sandboxId)
    return sbx
  }

  /** track adds a sandbox made elsewhere (a fork) to the ones killed at the end. */
  track(sbx) {
    this.#created.push(sbx.sandboxId)
  }

  async killAll() {
    const ids = this.#created.splice(0)
    await Promise.all(ids.map((id) => Sandbox.kill(id).catch(() => false)))
  }
}

/** Poll fn until it returns a truthy value, or fail with message after timeoutMs. */
export async function waitFor(fn, { timeoutMs = 10_000, intervalMs = 100, message = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs
  let last
  for (;;) {
    try {
      const v = await fn()
      if (v) return v
      last = undefined
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) {
      const cause = last ? `: last error: ${last}` : ''
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${message}${cause}`)
    }
    await sleep(intervalMs)
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** assertRejectsWith checks that promise rejects with an instance of cls (and the optional extra check). */
export async function assertRejectsWith(promise, cls, check = () => true) {
  await assert.rejects(promise, (err) => {
    assert.ok(
      err instanceof cls,
      `expected ${cls.name}, got ${err?.constructor?.name}: ${err?.message}`,
    )
    return check(err) !== false
  })
}

/** Assert that a Date lies within toleranceMs of expected (a Date or epoch ms). */
export function assertNear(actual, expected, toleranceMs, what) {
  const diff = Math.abs(actual.getTime() - new Date(expected).getTime())
  assert.ok(
    diff <= toleranceMs,
    `${what}: ${actual.toISOString()} is ${diff} ms away from ${new Date(expected).toISOString()} (tolerance ${toleranceMs} ms)`,
  )
}

export const semverRe = /^\d+\.\d+\.\d+$/
export const sandboxIdRe = /^[a-z0-9]+$/

export const encode = (s) => new TextEncoder().encode(s)
