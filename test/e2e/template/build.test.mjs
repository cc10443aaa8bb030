// Template builds through the official SDK's Template builder: files
// uploaded by hash, steps run in build sandboxes, the layer cache, tags,
// the start and ready commands, and the errors a user meets.

import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, mkdirSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'

import { Sandbox, Template, waitForPort, waitForFile } from 'e2b'

const unique = (p) => `${p}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
const built = []
const sandboxes = []
after(async () => {
  for (const s of sandboxes) await s.kill().catch(() => {})
  for (const name of built) {
    await fetch(`${process.env.E2B_API_URL}/templates/${name}`, { method: 'DELETE', headers: { 'X-API-Key': process.env.E2B_API_KEY } }).catch(() => {})
  }
})

function context() {
  const dir = mkdtempSync(join(tmpdir(), 'warren-tpl-'))
  mkdirSync(join(dir, 'app'))
  writeFileSync(join(dir, 'app', 'main.py'), 'print("hello from main")\n')
  writeFileSync(join(dir, 'app', 'util.py'), 'X = 41\n')
  writeFileSync(join(dir, 'notes.txt'), 'notes\n')
  writeFileSync(join(dir, 'secret.env'), 'TOKEN=1\n')
  writeFileSync(join(dir, '.dockerignore'), 'secret.env\n')
  symlinkSync('notes.txt', join(dir, 'link.txt'))
  return dir
}

async function build(tpl, name, opts = {}) {
  const logs = []
  built.push(name)
  const info = await Template.build(tpl, name, { onBuildLogs: (e) => logs.push(e.message), ...opts })
  return { info, logs }
}

async function rest(path) {
  const res = await fetch(process.env.E2B_API_URL + path, { headers: { 'X-API-Key': process.env.E2B_API_KEY } })
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`)
  return res.json()
}

// startCmdLine waits for the sandbox log entry whose message contains text.
async function startCmdLine(id, text) {
  for (let i = 0; i < 50; i++) {
    const { logs } = await rest(`/v2/sandboxes/${id}/logs?search=${encodeURIComponent(text)}`)
    if (logs.length > 0) return logs[0]
    await new Promise((r) => setTimeout(r, 100))
  }
  assert.fail(`no sandbox log entry contains ${text}`)
}

async function sandbox(ref) {
  const s = await Sandbox.create(ref, { timeoutMs: 120_000 })
  sandboxes.push(s)
  return s
}

describe('Template.build', { timeout: 600_000 }, () => {
  const dir = context()
  const name = unique('e2e-tpl')
  const tpl = () =>
    Template({ fileContextPath: dir })
      .fromTemplate('base')
      .setEnvs({ GREETING: 'hi there' })
      .runCmd('mkdir -p /opt/tool && echo "v1" > /opt/tool/version', { user: 'root' })
      .runCmd('echo built > /tmp/marker')
      .copy('app', '/home/user/app')
      .copy('notes.txt', '/etc/notes.txt', { user: 'root', mode: 0o600 })
      .setWorkdir('/home/user/app')
      .runCmd('python3 -c "import util; print(util.X + 1)" > answer.txt')
      .setStartCmd('python3 -m http.server 8123', waitForPort(8123))

  test('builds, and a sandbox sees files, env, workdir and the start command', async () => {
    const { info, logs } = await build(tpl(), name, { tags: ['v1'] })
    assert.ok(info.templateId)
    assert.ok(logs.some((l) => l.includes('RUN')), logs.join('\n'))
    assert.equal(await Template.exists(name), true)

    const s = await sandbox(name)
    const r = await s.commands.run('cat /opt/tool/version; echo "$GREETING"; pwd; cat answer.txt; python3 main.py; whoami; cat /tmp/marker')
    assert.equal(r.stdout, 'v1\nhi there\n/home/user/app\n42\nhello from main\nuser\nbuilt\n')
    const ls = await s.commands.run('stat -c "%U %a" /etc/notes.txt /home/user/app/main.py', { user: 'root' })
    assert.equal(ls.stdout, 'root 600\nuser 644\n')
    // The start command is serving already: create waited for its port.
    const page = await s.commands.run('curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8123/')
    assert.equal(page.stdout, '200')
    // The start command's output (http.server logs requests to stderr) is in
    // the sandbox's logs, an entry per line, and the build's log is served
    // as E2B serves it.
    const served = await startCmdLine(s.sandboxId, '"GET / HTTP/1.1" 200')
    assert.equal(served.fields.tag, 'startCmd')
    assert.equal(served.fields.stream, 'stderr')
    const buildLogs = await rest(`/templates/${info.templateId}/builds/${info.buildId}/logs?limit=100`)
    assert.ok(buildLogs.logs.length > 0 && buildLogs.logs.every((e) => logs.includes(e.message) && e.timestamp && e.level), JSON.stringify(buildLogs))
    assert.deepEqual((await rest(`/templates/${info.templateId}/builds/${info.buildId}/logs?direction=backward&limit=1`)).logs[0], buildLogs.logs.at(-1))
    // A tag names the same build.
    const t = await sandbox(`${name}:v1`)
    assert.equal((await t.commands.run('cat /home/user/app/answer.txt')).stdout, '42\n')
  })

  test('an unchanged rebuild is all cache hits; a changed line rebuilds from there', async () => {
    const again = await build(tpl(), name)
    const cached = again.logs.filter((l) => l === 'CACHED').length
    assert.ok(cached >= 3, `want every layer step cached:\n${again.logs.join('\n')}`)

    writeFileSync(join(dir, 'app', 'util.py'), 'X = 99\n')
    const changed = await build(tpl(), name, { tags: ['v2'] })
    const steps = changed.logs.filter((l) => /^\[\d+\/\d+\]/.test(l) || l === 'CACHED')
    // The RUN before the COPY stays cached, the COPY and what follows rerun.
    assert.ok(changed.logs.filter((l) => l === 'CACHED').length >= 1, steps.join('\n'))
    const s = await sandbox(`${name}:v2`)
    assert.equal((await s.commands.run('cat answer.txt')).stdout, '100\n')
    const old = await sandbox(`${name}:v1`)
    assert.equal((await old.commands.run('cat answer.txt')).stdout, '42\n')
  })

  test('tags can be listed, assigned and removed', async () => {
    await Template.assignTags(`${name}:v1`, ['stable'])
    const tags = (await Template.getTags(name)).map((t) => t.tag).sort()
    assert.deepEqual(tags, ['latest', 'stable', 'v1', 'v2'])
    await Template.removeTags(name, ['stable'])
    assert.ok(!(await Template.getTags(name)).some((t) => t.tag === 'stable'))
  })

  test('.dockerignore keeps files out', async () => {
    const n = unique('e2e-ignore')
    await build(Template({ fileContextPath: dir }).fromTemplate('base').copy('.', '/home/user/ctx/'), n)
    const s = await sandbox(n)
    const r = await s.commands.run('ls -A /home/user/ctx | sort | tr "\\n" " "; readlink /home/user/ctx/link.txt')
    assert.equal(r.stdout, '.dockerignore app link.txt notes.txt notes.txt\n')
  })
})

describe('build errors', { timeout: 300_000 }, () => {
  test('a failing RUN names the step, exit code and output', async () => {
    const n = unique('e2e-fail')
    const tpl = Template().fromTemplate('base').runCmd('echo first-step').runCmd('echo "about to fail" && exit 3')
    await assert.rejects(build(tpl, n), (e) => {
      assert.match(e.message, /exit(ed with)? code 3/)
      assert.match(e.message, /about to fail/)
      assert.match(e.message, /step 2/)
      return true
    })
  })

  test('a template that does not exist', async () => {
    await assert.rejects(build(Template().fromTemplate('no-such-template-xyz').runCmd('true'), unique('e2e-nobase')), /no-such-template-xyz/)
  })

  test('creating from a template that failed to build is refused', async () => {
    const n = unique('e2e-never')
    await assert.rejects(build(Template().fromTemplate('base').runCmd('exit 1'), n))
    await assert.rejects(Sandbox.create(n), /no ready build/)
  })

  test('a ready command that waits for a file the start command writes', async () => {
    const n = unique('e2e-ready')
    await build(Template().fromTemplate('base').setStartCmd('sleep 1 && touch /tmp/ready-now && sleep infinity', waitForFile('/tmp/ready-now')), n)
    const t0 = Date.now()
    const s = await sandbox(n)
    assert.ok(Date.now() - t0 >= 900, 'create returned before the ready command passed')
    assert.equal((await s.commands.run('test -f /tmp/ready-now && echo yes')).stdout, 'yes\n')
  })

  test('minFreeDiskMb grows the disk of the template\'s sandboxes', async () => {
    const n = unique('e2e-disk')
    await build(Template().fromTemplate('base').runCmd('true'), n, { minFreeDiskMb: 6000 })
    const s = await sandbox(n)
    const df = await s.commands.run('df -m --output=avail / | tail -1')
    assert.ok(Number(df.stdout.trim()) >= 6000, `free MB on / = ${df.stdout.trim()}, want at least 6000`)
  })

  test('deleting a template in use is refused with 409, then allowed', async () => {
    const n = unique('e2e-del')
    await build(Template().fromTemplate('base').runCmd('true'), n)
    const s = await Sandbox.create(n)
    const del = () => fetch(`${process.env.E2B_API_URL}/templates/${n}`, { method: 'DELETE', headers: { 'X-API-Key': process.env.E2B_API_KEY } })
    assert.equal((await del()).status, 409)
    await s.kill()
    assert.equal((await del()).status, 204)
    assert.equal(await Template.exists(n), false)
  })
})
