// sandbox.files: write and read in every format, list, makeDir, exists,
// getInfo, rename, remove, errors, and watchDir.

import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'

import { Sandboxes, assertRejectsWith, sdk, waitFor } from '../lib/env.mjs'

const { FileNotFoundError, FilesystemEventType, InvalidArgumentError, NotFoundError } = sdk

const pool = new Sandboxes()
let sbx

before(async () => {
  sbx = await pool.create({ timeoutMs: 240_000 })
})
after(() => pool.killAll())

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex')

function streamOf(...chunks) {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === 'string' ? new TextEncoder().encode(c) : c)
      controller.close()
    },
  })
}

describe('files.write and files.read', { timeout: 60_000 }, () => {
  test('text round trip with a relative path resolved against the home directory', async () => {
    const info = await sbx.files.write('hello.txt', 'hello, world')
    assert.equal(info.path, '/home/user/hello.txt')
    assert.equal(info.name, 'hello.txt')
    assert.equal(await sbx.files.read('hello.txt'), 'hello, world')
    assert.equal(await sbx.files.read('/home/user/hello.txt'), 'hello, world')
    assert.equal((await sbx.commands.run('stat -c %U:%G /home/user/hello.txt')).stdout, 'user:user\n')
  })

  test('writing again overwrites and an empty file reads back empty', async () => {
    await sbx.files.write('/tmp/over.txt', 'a long first version')
    await sbx.files.write('/tmp/over.txt', 'short')
    assert.equal(await sbx.files.read('/tmp/over.txt'), 'short')
    await sbx.files.write('/tmp/empty.txt', '')
    assert.equal(await sbx.files.read('/tmp/empty.txt'), '')
  })

  test('bytes round trip', async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i)
    await sbx.files.write('/tmp/bytes.bin', bytes.buffer)
    const back = await sbx.files.read('/tmp/bytes.bin', { format: 'bytes' })
    assert.ok(back instanceof Uint8Array)
    assert.deepEqual(Array.from(back), Array.from(bytes))
  })

  test('Blob in, blob and stream out', async () => {
    await sbx.files.write('/tmp/blob.txt', new Blob(['from ', 'a blob']))
    const blob = await sbx.files.read('/tmp/blob.txt', { format: 'blob' })
    assert.equal(await blob.text(), 'from a blob')
    const stream = await sbx.files.read('/tmp/blob.txt', { format: 'stream' })
    assert.equal(await new Response(stream).text(), 'from a blob')
  })

  test('ReadableStream upload (octet-stream)', async () => {
    const info = await sbx.files.write('/tmp/stream/in.txt', streamOf('chunk one, ', 'chunk two'))
    assert.equal(info.path, '/tmp/stream/in.txt')
    assert.equal(await sbx.files.read('/tmp/stream/in.txt'), 'chunk one, chunk two')
  })

  test('useOctetStream upload of text', async () => {
    await sbx.files.write('/tmp/octet.txt', 'octet body', { useOctetStream: true })
    assert.equal(await sbx.files.read('/tmp/octet.txt'), 'octet body')
  })

  test('gzip upload and download', async () => {
    const text = 'compress me '.repeat(1000)
    await sbx.files.write('/tmp/gz.txt', text, { gzip: true })
    assert.equal((await sbx.commands.run('wc -c < /tmp/gz.txt')).stdout.trim(), String(text.length), 'stored decompressed')
    assert.equal(await sbx.files.read('/tmp/gz.txt', { gzip: true }), text)
    const bytes = await sbx.files.read('/tmp/gz.txt', { gzip: true, format: 'bytes' })
    assert.equal(bytes.length, text.length)
  })

  test('several files with directories in one call', async () => {
    const infos = await sbx.files.write([
      { path: '/tmp/multi/a/b/one.txt', data: 'one' },
      { path: 'multi-rel/two.txt', data: 'two' },
      { path: '/tmp/multi/three.bin', data: new Blob([new Uint8Array([1, 2, 3])]) },
    ])
    assert.ok(Array.isArray(infos))
    assert.deepEqual(
      infos.map((i) => i.path).sort(),
      ['/home/user/multi-rel/two.txt', '/tmp/multi/a/b/one.txt', '/tmp/multi/three.bin'],
    )
    assert.equal(await sbx.files.read('/tmp/multi/a/b/one.txt'), 'one')
    assert.equal(await sbx.files.read('multi-rel/two.txt'), 'two')
    assert.deepEqual(Array.from(await sbx.files.read('/tmp/multi/three.bin', { format: 'bytes' })), [1, 2, 3])
    assert.equal((await sbx.commands.run('stat -c %U /tmp/multi/a/b')).stdout, 'user\n', 'created dirs belong to the user')
  })

  test('a large file round trips intact', async () => {
    const big = randomBytes(8 * 1024 * 1024)
    await sbx.files.write('/tmp/big.bin', big.buffer.slice(big.byteOffset, big.byteOffset + big.length))
    const back = await sbx.files.read('/tmp/big.bin', { format: 'bytes' })
    assert.equal(back.length, big.length)
    assert.equal(sha256(back), sha256(big))
    const remote = (await sbx.commands.run('sha256sum /tmp/big.bin')).stdout.split(' ')[0]
    assert.equal(remote, sha256(big))
  })

  test('user root writes as root', async () => {
    const info = await sbx.files.write('/root/secret.txt', 'root only', { user: 'root' })
    assert.equal(info.path, '/root/secret.txt')
    assert.equal(await sbx.files.read('/root/secret.txt', { user: 'root' }), 'root only')
    const entry = await sbx.files.getInfo('/root/secret.txt', { user: 'root' })
    assert.equal(entry.owner, 'root')
  })

  test('file metadata is stored and returned', async () => {
    const info = await sbx.files.write('/tmp/meta.txt', 'm', { metadata: { 'E2E-Key': 'some value' } })
    assert.deepEqual(info.metadata, { 'e2e-key': 'some value' })
    const entry = await sbx.files.getInfo('/tmp/meta.txt')
    assert.deepEqual(entry.metadata, { 'e2e-key': 'some value' })
  })

  test('reading a missing file throws FileNotFoundError', async () => {
    await assertRejectsWith(sbx.files.read('/tmp/no-such-file'), FileNotFoundError)
    await assertRejectsWith(sbx.files.read('/tmp/no-such-file', { format: 'bytes' }), NotFoundError)
  })

  test('reading a directory throws InvalidArgumentError', async () => {
    await assertRejectsWith(sbx.files.read('/tmp'), InvalidArgumentError)
  })
})

describe('files metadata operations', { timeout: 60_000 }, () => {
  before(async () => {
    await sbx.commands.run('mkdir -p /tmp/tree/a/b && echo c > /tmp/tree/a/b/c.txt && echo top > /tmp/tree/top.txt')
  })

  test('list with depth 1, 2 and 3', async () => {
    const one = await sbx.files.list('/tmp/tree')
    assert.deepEqual(one.map((e) => e.path).sort(), ['/tmp/tree/a', '/tmp/tree/top.txt'])
    const a = one.find((e) => e.name === 'a')
    assert.equal(a.type, 'dir')
    const top = one.find((e) => e.name === 'top.txt')
    assert.equal(top.type, 'file')
    assert.equal(top.size, 4)

    const two = await sbx.files.list('/tmp/tree', { depth: 2 })
    assert.deepEqual(two.map((e) => e.path).sort(), ['/tmp/tree/a', '/tmp/tree/a/b', '/tmp/tree/top.txt'])

    const three = await sbx.files.list('/tmp/tree', { depth: 3 })
    assert.deepEqual(
      three.map((e) => e.path).sort(),
      ['/tmp/tree/a', '/tmp/tree/a/b', '/tmp/tree/a/b/c.txt', '/tmp/tree/top.txt'],
    )
  })

  test('list errors: missing path and a file', async () => {
    await assertRejectsWith(sbx.files.list('/tmp/tree/missing'), FileNotFoundError)
    await assertRejectsWith(sbx.files.list('/tmp/tree/top.txt'), InvalidArgumentError)
  })

  test('makeDir returns true, then false when it exists', async () => {
    assert.equal(await sbx.files.makeDir('/tmp/made/x/y'), true)
    assert.equal(await sbx.files.makeDir('/tmp/made/x/y'), false)
    const info = await sbx.files.getInfo('/tmp/made/x/y')
    assert.equal(info.type, 'dir')
    assert.equal(info.owner, 'user')
  })

  test('exists', async () => {
    assert.equal(await sbx.files.exists('/tmp/tree/top.txt'), true)
    assert.equal(await sbx.files.exists('/tmp/tree/a'), true)
    assert.equal(await sbx.files.exists('/tmp/tree/nope'), false)
  })

  test('getInfo of a file, a directory, a symlink and a missing path', async () => {
    const before = Date.now()
    await sbx.files.write('/tmp/info.txt', 'hello')
    const info = await sbx.files.getInfo('/tmp/info.txt')
    assert.equal(info.name, 'info.txt')
    assert.equal(info.path, '/tmp/info.txt')
    assert.equal(info.type, 'file')
    assert.equal(info.size, 5)
    assert.match(info.permissions, /^-rw/)
    assert.equal(info.mode & 0o600, 0o600, `mode=${info.mode?.toString(8)}`)
    assert.equal(info.owner, 'user')
    assert.equal(info.group, 'user')
    assert.ok(info.modifiedTime instanceof Date)
    assert.ok(Math.abs(info.modifiedTime.getTime() - before) < 60_000, `modifiedTime=${info.modifiedTime.toISOString()}`)

    const dir = await sbx.files.getInfo('/tmp/tree')
    assert.equal(dir.type, 'dir')
    assert.match(dir.permissions, /^d/)

    await sbx.commands.run('ln -sf /tmp/info.txt /tmp/info-link')
    const link = await sbx.files.getInfo('/tmp/info-link')
    assert.equal(link.type, 'file', "a symlink reports its target's type")
    assert.equal(link.symlinkTarget, '/tmp/info.txt')

    await assertRejectsWith(sbx.files.getInfo('/tmp/missing-info'), FileNotFoundError)
  })

  test('rename moves a file and reports the new entry', async () => {
    await sbx.files.write('/tmp/old-name.txt', 'moving')
    const entry = await sbx.files.rename('/tmp/old-name.txt', '/tmp/new-name.txt')
    assert.equal(entry.path, '/tmp/new-name.txt')
    assert.equal(entry.name, 'new-name.txt')
    assert.equal(await sbx.files.exists('/tmp/old-name.txt'), false)
    assert.equal(await sbx.files.read('/tmp/new-name.txt'), 'moving')
    await assertRejectsWith(sbx.files.rename('/tmp/old-name.txt', '/tmp/x'), FileNotFoundError)
  })

  test('remove deletes files and whole directories; a missing path is fine', async () => {
    await sbx.files.write('/tmp/rm/d/f.txt', 'x')
    await sbx.files.remove('/tmp/rm/d/f.txt')
    assert.equal(await sbx.files.exists('/tmp/rm/d/f.txt'), false)
    await sbx.files.write('/tmp/rm/d/g.txt', 'y')
    await sbx.files.remove('/tmp/rm')
    assert.equal(await sbx.files.exists('/tmp/rm'), false)
    await sbx.files.remove('/tmp/rm')
  })
})

describe('files.watchDir', { timeout: 60_000 }, () => {
  test('receives a create event', async () => {
    await sbx.files.makeDir('/tmp/watched')
    const events = []
    const exits = []
    const handle = await sbx.files.watchDir('/tmp/watched', (e) => events.push(e), {
      timeoutMs: 30_000,
      onExit: (err) => exits.push(err),
    })
    try {
      await sbx.files.write('/tmp/watched/new.txt', 'created')
      await waitFor(
        () => events.some((e) => e.name === 'new.txt' && e.type === FilesystemEventType.CREATE),
        { message: `a create event for new.txt; got ${JSON.stringify(events)}` },
      )
      await sbx.files.remove('/tmp/watched/new.txt')
      await waitFor(
        () => events.some((e) => e.name === 'new.txt' && e.type === FilesystemEventType.REMOVE),
        { message: `a remove event for new.txt; got ${JSON.stringify(events)}` },
      )
    } finally {
      await handle.stop()
    }
  })

  test('recursive watch with entries', async () => {
    await sbx.files.makeDir('/tmp/watched-r/sub')
    const events = []
    const handle = await sbx.files.watchDir('/tmp/watched-r', (e) => events.push(e), {
      recursive: true,
      includeEntry: true,
      timeoutMs: 30_000,
    })
    try {
      await sbx.files.write('/tmp/watched-r/sub/deep.txt', 'deep')
      const ev = await waitFor(
        () => events.find((e) => e.name === 'sub/deep.txt' && e.type === FilesystemEventType.CREATE),
        { message: `a create event for sub/deep.txt; got ${JSON.stringify(events)}` },
      )
      assert.equal(ev.entry?.path, '/tmp/watched-r/sub/deep.txt')
    } finally {
      await handle.stop()
    }
  })

  test('watching a missing directory fails', async () => {
    await assertRejectsWith(sbx.files.watchDir('/tmp/not-there', () => {}), FileNotFoundError)
  })
})
