// Pause and resume as warren does them today: the sandbox's processes are
// frozen in memory (cgroup freezer on runc, runsc pause on gVisor) and thawed
// by connect or, with lifecycle.autoResume, by traffic.

import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'

import { Sandbox, Sandboxes, waitFor } from '../lib/env.mjs'

const pool = new Sandboxes()
after(() => pool.killAll())

describe('pause and resume', { timeout: 120_000 }, () => {
  test('pause keeps files and running processes; connect resumes', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    await sbx.files.write('/home/user/state.txt', 'before')
    const bg = await sbx.commands.run('sleep 600', { background: true, timeoutMs: 0 })

    assert.equal(await sbx.pause(), true)
    assert.equal(await sbx.pause(), false, 'a second pause reports already paused')
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused')
    assert.equal(await sbx.isRunning(), false, 'envd is unreachable while paused')

    const resumed = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 60_000 })
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'running')
    assert.equal(await resumed.files.read('/home/user/state.txt'), 'before')
    const pids = (await resumed.commands.list()).map((p) => p.pid)
    assert.ok(pids.includes(bg.pid), `background process ${bg.pid} survives pause: ${pids}`)
    assert.equal((await resumed.commands.run('echo after')).stdout, 'after\n')
  })

  test('a paused sandbox can be killed', async () => {
    const sbx = await pool.create({ timeoutMs: 60_000 })
    assert.equal(await sbx.pause(), true)
    assert.equal(await Sandbox.kill(sbx.sandboxId), true)
    assert.equal(await Sandbox.kill(sbx.sandboxId), false)
  })

  test('onTimeout pause, then traffic resumes it (autoResume)', async () => {
    const sbx = await pool.create({ timeoutMs: 2_000, lifecycle: { onTimeout: 'pause', autoResume: true } })
    const info = await Sandbox.getInfo(sbx.sandboxId)
    assert.deepEqual(info.lifecycle, { onTimeout: 'pause', autoResume: true })
    await waitFor(async () => (await Sandbox.getInfo(sbx.sandboxId)).state === 'paused', {
      timeoutMs: 15_000,
      message: 'the sandbox to pause at its timeout',
    })
    assert.equal((await sbx.commands.run('echo woke')).stdout, 'woke\n')
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'running')
  })
})
