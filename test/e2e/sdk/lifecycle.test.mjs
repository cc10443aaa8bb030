// Sandbox lifecycle through the SDK: create, info, connect, metrics, getHost.

import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'

import { Sandbox, Sandboxes, assertNear, sandboxIdRe, semverRe, usesV2Paths, waitFor } from '../lib/env.mjs'

const pool = new Sandboxes()
after(() => pool.killAll())

describe('Sandbox.create', { timeout: 120_000 }, () => {
  test('default template is base and the default timeout is 300 s', async () => {
    const before = Date.now()
    const sbx = await pool.create()
    assert.match(sbx.sandboxId, sandboxIdRe)

    const info = await sbx.getInfo()
    assert.equal(info.sandboxId, sbx.sandboxId)
    assert.ok(
      info.templateId === 'base' || info.name === 'base',
      `templateId=${info.templateId} name=${info.name}: neither is "base"`,
    )
    assert.equal(info.state, 'running')
    assertNear(info.startedAt, before, 30_000, 'startedAt')
    assertNear(info.endAt, info.startedAt.getTime() + 300_000, 10_000, 'endAt')

    const res = await sbx.commands.run('echo ready')
    assert.equal(res.stdout, 'ready\n')
  })

  test('metadata, envs and timeoutMs are applied', async () => {
    const metadata = { purpose: 'e2e', 'with space': 'a b&c=d' }
    const sbx = await pool.create({
      metadata,
      envs: { E2E_GLOBAL: 'from-create', E2E_OVERRIDE: 'global' },
      timeoutMs: 120_000,
    })

    const info = await sbx.getInfo()
    assert.deepEqual(info.metadata, metadata)
    assertNear(info.endAt, info.startedAt.getTime() + 120_000, 10_000, 'endAt')

    const res = await sbx.commands.run('echo "$E2E_GLOBAL $E2E_OVERRIDE"', {
      envs: { E2E_OVERRIDE: 'request' },
    })
    assert.equal(res.stdout, 'from-create request\n')

    const root = await sbx.commands.run('echo "$E2E_GLOBAL"', { user: 'root' })
    assert.equal(root.stdout, 'from-create\n', 'envVars apply to every user')
  })

  test('commands see E2B_SANDBOX, E2B_SANDBOX_ID, E2B_TEMPLATE_ID and E2B_TEAM_ID, as in E2B', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    const res = await sbx.commands.run('echo "$E2B_SANDBOX $E2B_SANDBOX_ID $E2B_TEMPLATE_ID $E2B_TEAM_ID"')
    // The suite's key is the admin key, of team default.
    assert.equal(res.stdout, `true ${sbx.sandboxId} ${(await sbx.getInfo()).templateId} default\n`)
  })

  test('an explicit template name works', async () => {
    const sbx = await pool.create('base', { timeoutMs: 60_000 })
    const res = await sbx.commands.run('cat /etc/os-release')
    assert.match(res.stdout, /ID=/)
  })
})

describe('sandbox.getInfo', { timeout: 120_000 }, () => {
  test('has every field with sane values', async () => {
    const sbx = await pool.create({ timeoutMs: 90_000 })
    const info = await sbx.getInfo()

    assert.equal(info.sandboxId, sbx.sandboxId)
    assert.equal(typeof info.templateId, 'string')
    assert.ok(info.templateId.length > 0)
    assert.ok(info.startedAt instanceof Date && !Number.isNaN(info.startedAt.getTime()))
    assert.ok(info.endAt instanceof Date && !Number.isNaN(info.endAt.getTime()))
    assert.ok(info.endAt > info.startedAt, 'endAt after startedAt')
    assert.equal(info.state, 'running')
    assert.ok(Number.isInteger(info.cpuCount) && info.cpuCount > 0, `cpuCount=${info.cpuCount}`)
    assert.ok(Number.isInteger(info.memoryMB) && info.memoryMB > 0, `memoryMB=${info.memoryMB}`)
    assert.match(info.envdVersion, semverRe)
    assert.deepEqual(info.metadata, {})

    const staticInfo = await Sandbox.getInfo(sbx.sandboxId)
    assert.equal(staticInfo.sandboxId, sbx.sandboxId)
    assert.equal(staticInfo.endAt.getTime(), info.endAt.getTime())
  })
})

describe('Sandbox.connect', { timeout: 120_000 }, () => {
  test('connects to a running sandbox and runs a command through it', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    await sbx.files.write('/tmp/connect-marker', 'written-before-connect')

    const other = await Sandbox.connect(sbx.sandboxId)
    assert.equal(other.sandboxId, sbx.sandboxId)
    const res = await other.commands.run('cat /tmp/connect-marker')
    assert.equal(res.stdout, 'written-before-connect')
    assert.equal(await other.isRunning(), true)
  })

  test('extends the timeout but never shortens it', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })

    await Sandbox.connect(sbx.sandboxId, { timeoutMs: 600_000 })
    const extended = await sbx.getInfo()
    assertNear(extended.endAt, Date.now() + 600_000, 15_000, 'endAt after connect(600 s)')

    await Sandbox.connect(sbx.sandboxId, { timeoutMs: 30_000 })
    const kept = await sbx.getInfo()
    assertNear(kept.endAt, extended.endAt, 2_000, 'endAt after connect(30 s)')

    const same = await sbx.connect()
    assert.equal(same, sbx)
  })
})

describe('sandbox.getMetrics', { timeout: 120_000 }, () => {
  test('returns numeric figures with memory in use', async () => {
    const sbx = await pool.create({ timeoutMs: 90_000 })
    await sbx.commands.run('head -c 8000000 /dev/zero > /tmp/fill && sync')

    const metrics = await waitFor(
      async () => {
        const m = await sbx.getMetrics()
        return m.length > 0 ? m : undefined
      },
      { timeoutMs: 30_000, intervalMs: 1_000, message: 'a non-empty getMetrics()' },
    )
    const m = metrics.at(-1)
    for (const key of ['cpuUsedPct', 'cpuCount', 'memUsed', 'memTotal', 'memCache', 'diskUsed', 'diskTotal']) {
      assert.equal(typeof m[key], 'number', `${key} is a number (got ${JSON.stringify(m[key])})`)
      assert.ok(Number.isFinite(m[key]) && m[key] >= 0, `${key}=${m[key]}`)
    }
    assert.ok(m.memUsed > 0, `memUsed=${m.memUsed}`)
    assert.ok(m.memTotal >= m.memUsed, `memTotal=${m.memTotal} < memUsed=${m.memUsed}`)
    assert.ok(m.cpuCount > 0, `cpuCount=${m.cpuCount}`)
    assert.ok(m.diskTotal > 0, `diskTotal=${m.diskTotal}`)
    assert.ok(m.timestamp instanceof Date && !Number.isNaN(m.timestamp.getTime()))
  })

  test('start/end select a window of the history: an hour ago is empty, around now is not', async () => {
    const sbx = await pool.create({ timeoutMs: 90_000 })
    const t0 = Date.now()
    const hourAgo = await sbx.getMetrics({ start: new Date(t0 - 2 * 3600_000), end: new Date(t0 - 3600_000) })
    assert.deepEqual(hourAgo, [], 'a window an hour before the sandbox existed')

    // The server samples every 5 s: a window around now fills up.
    const around = await waitFor(
      async () => {
        const m = await sbx.getMetrics({ start: new Date(t0 - 60_000), end: new Date(Date.now() + 60_000) })
        return m.length >= 2 ? m : undefined
      },
      { timeoutMs: 30_000, intervalMs: 1_000, message: 'two samples in a window around now' },
    )
    for (let i = 1; i < around.length; i++) {
      assert.ok(around[i].timestamp > around[i - 1].timestamp, 'samples are oldest first')
    }
    // The SDK rounds start/end to the nearest second; samples are matched
    // by their whole unix second.
    const second = Math.floor(around.at(-1).timestamp.getTime() / 1000) * 1000
    const onlyLast = await sbx.getMetrics({ start: new Date(second), end: new Date(second) })
    assert.ok(onlyLast.length >= 1 && onlyLast.every((m) => Math.floor(m.timestamp.getTime() / 1000) * 1000 === second),
      `a one-second window: ${JSON.stringify(onlyLast)}`)
    const all = await sbx.getMetrics()
    assert.ok(all.length >= around.length, 'without start/end: the whole history')
  })
})

describe('sandbox.getHost', { timeout: 60_000 }, () => {
  test('is <port>-<sandboxId>.<domain> without a scheme', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    const host = sbx.getHost(8080)
    assert.equal(host, `8080-${sbx.sandboxId}.${sbx.sandboxDomain}`)
    assert.ok(sbx.sandboxDomain, 'sandboxDomain is set')
    assert.doesNotMatch(host, /^[a-z]+:\/\//)
    if (process.env.E2B_DOMAIN) {
      assert.notEqual(sbx.sandboxDomain, 'e2b.app', 'server or client domain must not fall back to E2B cloud')
    }
  })
})

describe('sandbox tokens', { timeout: 60_000 }, () => {
  test('the sandbox is secured with an envd access token', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    assert.ok(sbx.envdAccessToken, 'create returned an envdAccessToken')
  })

  test('v1 create with secure:false returns no token and still works', { skip: usesV2Paths && 'v2 sandboxes are always secured' }, async () => {
    const sbx = await pool.create({ timeoutMs: 60_000, secure: false })
    assert.equal(sbx.envdAccessToken, undefined)
    const res = await sbx.commands.run('whoami')
    assert.equal(res.stdout, 'user\n')
  })
})
