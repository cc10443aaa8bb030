// sandbox.pty: an interactive shell with input, resize and kill.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import { Sandboxes, assertRejectsWith, encode, sdk, waitFor } from '../lib/env.mjs'

const { CommandExitError } = sdk

const pool = new Sandboxes()
let sbx

before(async () => {
  sbx = await pool.create({ timeoutMs: 120_000 })
})
after(() => pool.killAll())

/** Terminal collects a PTY's output as text. */
class Terminal {
  text = ''
  #decoder = new TextDecoder()
  onData = (bytes) => {
    this.text += this.#decoder.decode(bytes, { stream: true })
  }

  waitFor(needle, message = JSON.stringify(needle)) {
    return waitFor(() => this.text.includes(needle), { timeoutMs: 15_000, message: `PTY output ${message}; got ${JSON.stringify(this.text.slice(-400))}` })
  }
}

describe('pty', { timeout: 60_000 }, () => {
  test('create, sendInput, resize, kill', async () => {
    const term = new Terminal()
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: term.onData })
    assert.ok(Number.isInteger(pty.pid) && pty.pid > 0)

    await sbx.pty.sendInput(pty.pid, encode('echo typed-$((6*7))\n'))
    await term.waitFor('echo typed-$((6*7))', 'echoing what was typed')
    await term.waitFor('typed-42', 'with the command result')

    await sbx.pty.sendInput(pty.pid, encode('stty size; echo "term=$TERM"\n'))
    await term.waitFor('24 80', 'with the initial size')
    await term.waitFor('term=xterm-256color')

    await sbx.pty.resize(pty.pid, { cols: 120, rows: 40 })
    await sbx.pty.sendInput(pty.pid, encode('stty size\n'))
    await term.waitFor('40 120', 'with the new size')

    await sbx.pty.sendInput(pty.pid, encode('echo "who=$(whoami)"\n'))
    await term.waitFor('who=user\r\n', 'running as user')

    assert.equal(await sbx.pty.kill(pty.pid), true)
    await assertRejectsWith(pty.wait(), CommandExitError)
    assert.equal(await sbx.pty.kill(pty.pid), false, 'kill after exit')
  })

  test('exit ends the shell with its status', async () => {
    const term = new Terminal()
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: term.onData, cwd: '/tmp', envs: { E2E_PTY: 'env-ok' } })
    await sbx.pty.sendInput(pty.pid, encode('echo "$E2E_PTY $PWD"\n'))
    await term.waitFor('env-ok /tmp')
    await sbx.pty.sendInput(pty.pid, encode('exit 0\n'))
    const res = await pty.wait()
    assert.equal(res.exitCode, 0)
  })

  test('a PTY survives a dropped stream and can be reattached', async () => {
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: () => {} })
    await pty.disconnect()

    const term = new Terminal()
    const attached = await sbx.pty.connect(pty.pid, { onData: term.onData })
    await sbx.pty.sendInput(pty.pid, encode('echo again-$((2+3))\n'))
    await term.waitFor('again-5')
    assert.equal(await attached.kill(), true)
    await assert.rejects(attached.wait())
  })
})
