// sandbox.commands: run, exit codes, env, cwd, users, streaming, background
// processes, kill, stdin, list, connect and timeouts.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import { Sandboxes, assertRejectsWith, sdk, sleep, uniqueTag, waitFor } from '../lib/env.mjs'

const { AuthenticationError, CommandExitError, InvalidArgumentError, NotFoundError, TimeoutError } = sdk

const pool = new Sandboxes()
let sbx

before(async () => {
  sbx = await pool.create({ timeoutMs: 240_000 })
})
after(() => pool.killAll())

async function listed(marker) {
  const procs = await sbx.commands.list()
  return procs.find((p) => p.args.join(' ').includes(marker))
}

describe('commands.run', { timeout: 60_000 }, () => {
  test('returns stdout, stderr and exit code 0', async () => {
    const res = await sbx.commands.run('echo out; echo err >&2')
    assert.equal(res.exitCode, 0)
    assert.equal(res.stdout, 'out\n')
    assert.equal(res.stderr, 'err\n')
  })

  test('a non-zero exit throws CommandExitError with the result', async () => {
    await assertRejectsWith(sbx.commands.run('echo partial; echo oops >&2; exit 3'), CommandExitError, (err) => {
      assert.equal(err.exitCode, 3)
      assert.equal(err.stdout, 'partial\n')
      assert.equal(err.stderr, 'oops\n')
      assert.match(err.error ?? '', /3/)
    })
  })

  test('passes envs', async () => {
    const res = await sbx.commands.run('echo "$E2E_A-$E2E_B"', { envs: { E2E_A: 'one', E2E_B: 'two words' } })
    assert.equal(res.stdout, 'one-two words\n')
  })

  test('runs in cwd, defaulting to the home directory', async () => {
    assert.equal((await sbx.commands.run('pwd', { cwd: '/tmp' })).stdout, '/tmp\n')
    assert.equal((await sbx.commands.run('pwd')).stdout, '/home/user\n')
  })

  test('a missing cwd is an error', async () => {
    await assertRejectsWith(sbx.commands.run('pwd', { cwd: '/does/not/exist' }), InvalidArgumentError)
  })

  test('the default user is "user" with HOME=/home/user', async () => {
    const res = await sbx.commands.run('whoami; id -u; echo "$HOME"; echo "$USER"')
    assert.equal(res.stdout, 'user\n1000\n/home/user\nuser\n')
  })

  test('user root runs as root', async () => {
    const res = await sbx.commands.run('whoami; id -u; echo "$HOME"', { user: 'root' })
    assert.equal(res.stdout, 'root\n0\n/root\n')
  })

  test('user "user" can sudo', async () => {
    const res = await sbx.commands.run('sudo -n whoami')
    assert.equal(res.stdout, 'root\n')
  })

  test('a process can start threads and fork', async () => {
    const res = await sbx.commands.run(
      `python3 -c 'import os, threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join(); pid = os.fork(); os._exit(0) if pid == 0 else print("fork", os.waitpid(pid, 0)[1])'`,
    )
    assert.equal(res.stdout, 'thread\nfork 0\n')
  })

  test('an unknown user is rejected', async () => {
    await assertRejectsWith(sbx.commands.run('true', { user: 'nobody-e2e' }), AuthenticationError)
  })

  test('onStdout and onStderr stream output while the command runs', async () => {
    const events = []
    const start = Date.now()
    const res = await sbx.commands.run(
      'for i in 1 2 3 4; do echo out$i; echo err$i >&2; sleep 0.4; done',
      {
        onStdout: (data) => events.push({ stream: 'stdout', data, at: Date.now() }),
        onStderr: (data) => events.push({ stream: 'stderr', data, at: Date.now() }),
      },
    )
    const end = Date.now()
    const out = events.filter((e) => e.stream === 'stdout')
    const err = events.filter((e) => e.stream === 'stderr')
    assert.equal(out.map((e) => e.data).join(''), 'out1\nout2\nout3\nout4\n')
    assert.equal(err.map((e) => e.data).join(''), 'err1\nerr2\nerr3\nerr4\n')
    assert.equal(res.stdout, 'out1\nout2\nout3\nout4\n')
    assert.ok(out.length >= 2, `stdout came in ${out.length} callback(s), not streamed`)
    assert.ok(err.length >= 2, `stderr came in ${err.length} callback(s), not streamed`)
    assert.ok(
      out[0].at - start < end - start - 800,
      `first stdout arrived ${out[0].at - start} ms after start, the command ended at ${end - start} ms`,
    )
  })

  test('background:true returns a handle that can be waited on', async () => {
    const handle = await sbx.commands.run('sleep 0.5; echo bg-done', { background: true })
    assert.ok(Number.isInteger(handle.pid) && handle.pid > 0, `pid=${handle.pid}`)
    assert.equal(handle.exitCode, undefined, 'not finished yet')
    const res = await handle.wait()
    assert.equal(res.exitCode, 0)
    assert.equal(res.stdout, 'bg-done\n')
    assert.equal(handle.exitCode, 0)
  })

  test('kill returns true for a running process, false for an unknown pid', async () => {
    const marker = uniqueTag('kill')
    const handle = await sbx.commands.run(`sleep 60 # ${marker}`, { background: true })
    await waitFor(() => listed(marker), { message: 'the process to be listed' })

    assert.equal(await sbx.commands.kill(handle.pid), true)
    await assertRejectsWith(handle.wait(), CommandExitError, (err) => {
      assert.equal(err.exitCode, -1, 'a killed process reports exit code -1')
    })
    await waitFor(async () => !(await listed(marker)), { message: 'the killed process to leave the list' })

    assert.equal(await sbx.commands.kill(handle.pid), false, 'kill of an exited pid')
    assert.equal(await sbx.commands.kill(999_999), false, 'kill of an unknown pid')
  })

  test('handle.kill ends the process', async () => {
    const handle = await sbx.commands.run('sleep 60', { background: true })
    assert.equal(await handle.kill(), true)
    await assert.rejects(handle.wait(), CommandExitError)
  })

  test('stdin: sendStdin then closeStdin', async () => {
    const handle = await sbx.commands.run('cat; echo "<eof>"', { background: true, stdin: true })
    await sbx.commands.sendStdin(handle.pid, 'hello ')
    await handle.sendStdin(new TextEncoder().encode('stdin\n'))
    await waitFor(() => handle.stdout.includes('hello stdin\n'), { message: 'cat to echo stdin' })
    await sbx.commands.closeStdin(handle.pid)
    const res = await handle.wait()
    assert.equal(res.stdout, 'hello stdin\n<eof>\n')
  })

  test('without stdin:true the process sees EOF at once', async () => {
    const res = await sbx.commands.run('cat; echo done')
    assert.equal(res.stdout, 'done\n')
  })

  test('commands.list shows a running process with its config', async () => {
    const marker = uniqueTag('list')
    const handle = await sbx.commands.run(`sleep 30 # ${marker}`, {
      background: true,
      cwd: '/tmp',
      envs: { E2E_LISTED: 'yes' },
    })
    try {
      const proc = await waitFor(() => listed(marker), { message: 'the process to be listed' })
      assert.equal(proc.pid, handle.pid)
      assert.equal(proc.cmd, '/bin/bash')
      assert.deepEqual(proc.args, ['-l', '-c', `sleep 30 # ${marker}`])
      assert.equal(proc.cwd, '/tmp')
      assert.equal(proc.envs.E2E_LISTED, 'yes')
    } finally {
      await handle.kill()
    }
    await waitFor(async () => !(await listed(marker)), { message: 'the process to leave the list' })
  })

  test('commands.connect attaches to a running process', async () => {
    const handle = await sbx.commands.run('for i in $(seq 1 15); do echo tick-$i; sleep 0.2; done', {
      background: true,
    })
    await waitFor(() => handle.stdout.includes('tick-1\n'), { message: 'the first tick' })
    // Dropping the first stream must not stop the process.
    await handle.disconnect()
    await sleep(300)

    const seen = []
    const attached = await sbx.commands.connect(handle.pid, { onStdout: (d) => seen.push(d) })
    assert.equal(attached.pid, handle.pid)
    const res = await attached.wait()
    assert.equal(res.exitCode, 0)
    assert.ok(seen.join('').includes('tick-15\n'), `connected stream saw: ${JSON.stringify(seen.join(''))}`)
    assert.ok(!seen.join('').startsWith('tick-1\n'), 'connect streams live output, not history from the start')
  })

  test('commands.connect to an unknown pid fails', async () => {
    await assertRejectsWith(sbx.commands.connect(999_999), NotFoundError)
  })

  test('a command that outlives timeoutMs throws TimeoutError and is killed', async () => {
    const marker = uniqueTag('timeout')
    const start = Date.now()
    await assertRejectsWith(sbx.commands.run(`sleep 30 # ${marker}`, { timeoutMs: 1_500 }), TimeoutError)
    assert.ok(Date.now() - start < 15_000, 'the timeout fired in time')
    await waitFor(async () => !(await listed(marker)), {
      timeoutMs: 10_000,
      message: 'envd to kill the process after its deadline',
    })
  })

  test('long and binary-ish output arrives intact', async () => {
    const res = await sbx.commands.run('seq 1 20000; printf "caf\\xc3\\xa9 \\xe2\\x9c\\x93\\n"')
    const lines = res.stdout.split('\n')
    assert.equal(lines[0], '1')
    assert.equal(lines[19_999], '20000')
    assert.equal(lines[20_000], 'café ✓')
  })

  test('several commands run concurrently', async () => {
    const started = Date.now()
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => sbx.commands.run(`sleep 1; echo ${i}`)),
    )
    assert.deepEqual(results.map((r) => r.stdout), ['1\n', '2\n', '3\n', '4\n', '5\n'])
    assert.ok(Date.now() - started < 4_500, `5 × sleep 1 took ${Date.now() - started} ms: not concurrent`)
  })
})
